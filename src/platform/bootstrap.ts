/**
 * The first start of a fresh data directory: an admin API key (shown once), the example packages uploaded
 * through the same path as any upload (bundle, checks, discovery), and a demo agent granted them, so a new
 * user can open a session and call a tool at once. Later starts do nothing here.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isSystemError } from '../common/index.js';
import { PACKAGE_ENTRIES, packBundle } from '../package/index.js';
import type { Platform } from './platform.js';

export interface FirstStart {
  apiKey: string;
  packages: string[];
  /** Example packages that could not be loaded, with why. */
  skipped: string[];
  agentId: string | null;
}

/**
 * Replicas starting at once on a fresh database take turns here (the store's exclusive lock): the first makes
 * the key, the examples and the demo agent; the others then find a key and do nothing.
 */
export function bootstrapIfFresh(platform: Platform, examplesDir: string | null): Promise<FirstStart | null> {
  return platform.store.exclusively('first start', () => firstStart(platform, examplesDir));
}

async function firstStart(platform: Platform, examplesDir: string | null): Promise<FirstStart | null> {
  if (await platform.apiKeys.any()) return null;
  const packages: string[] = [];
  const skipped: string[] = [];
  if (examplesDir) {
    // expected: no examples folder (ENOENT, ENOTDIR); one that is there but unreadable is reported
    const names = await readdir(examplesDir).catch((error: unknown) => {
      if (isSystemError(error, 'ENOENT', 'ENOTDIR')) return [] as string[];
      throw error;
    });
    for (const name of names.sort()) {
      const dir = join(examplesDir, name);
      if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) continue;
      try {
        // Bundled as `subako pack` bundles it (the manifest, the module, its assets): the example's sources stay
        // out, so pushing the same example later is the same upload, not a conflicting one.
        const { record } = await platform.packages.upload(await packBundle(dir, { only: PACKAGE_ENTRIES }));
        packages.push(record.name);
      } catch (err) {
        skipped.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  let agentId: string | null = null;
  if (packages.length > 0) {
    const { agent } = await platform.agents.create({
      name: 'demo',
      description: 'The example packages, ready to call.',
      tools: packages.map((name) => ({ package: name, version: 'latest' })),
    });
    agentId = agent.id;
  }
  // The key comes last: a start that failed above is retried whole at the next start.
  const { key } = await platform.apiKeys.create('admin');
  return { apiKey: key, packages, skipped, agentId };
}
