/**
 * The file system of a call, as the ABI page orders it: /volume/tmp, /volume/data (when the agent enables
 * it), /package read-only (when the package has assets), then /skills and each /skills/<name> read-only.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PreopenSpec } from '../wasi/index.js';
import type { FunctionCallContext, PackageSource } from './types.js';

export function packagePreopens(source: PackageSource): PreopenSpec[] {
  return source.assetsDir ? [{ guestPath: '/package', hostPath: source.assetsDir, readOnly: true }] : [];
}

export function callPreopens(source: PackageSource, ctx: FunctionCallContext): PreopenSpec[] {
  const preopens: PreopenSpec[] = [{ guestPath: '/volume/tmp', hostPath: ctx.tmpDir, readOnly: false }];
  if (ctx.dataDir) preopens.push({ guestPath: '/volume/data', hostPath: ctx.dataDir, readOnly: false });
  preopens.push(...packagePreopens(source));
  if (ctx.skillsDir) {
    preopens.push({ guestPath: '/skills', hostPath: ctx.skillsDir, readOnly: true });
    const names = readdirSync(ctx.skillsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    for (const name of names) preopens.push({ guestPath: `/skills/${name}`, hostPath: join(ctx.skillsDir, name), readOnly: true });
  }
  return preopens;
}
