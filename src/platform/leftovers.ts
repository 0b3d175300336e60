/**
 * What a previous process may have left behind when it was killed mid-way, removed when the platform
 * opens (before it serves, so nothing found can be a write still under way): uploads' scratch trees,
 * temporary blobs and partial trees, blobs no package or skill version records, volumes whose session or
 * agent record is gone, and the volumes' trash. Each store removes only names it writes itself.
 */
import { rm } from 'node:fs/promises';
import type { ContentStore } from '../package/index.js';
import type { AgentStore, PackageStore, SessionStore, SkillStore } from './store/index.js';
import type { Volumes } from './volumes/index.js';

export interface ContentStores {
  packages: ContentStore;
  skills: ContentStore;
}

/** What the sweep asks the store: which blobs and volumes are still some record's. */
type LeftoverRecords = Pick<PackageStore, 'allPackages'> & Pick<SkillStore, 'listSkills'> & Pick<SessionStore, 'getSession'> & Pick<AgentStore, 'getAgent'>;

export async function sweepLeftovers(store: LeftoverRecords, volumes: Volumes, blobs: ContentStores, scratchDir: string): Promise<void> {
  await rm(scratchDir, { recursive: true, force: true }); // the server's own staging, never a guest's
  await blobs.packages.sweep(new Set((await store.allPackages()).map((p) => p.digest)));
  await blobs.skills.sweep(await skillDigests(store));
  await volumes.sweep({
    session: async (id) => (await store.getSession(id)) !== null,
    agent: async (id) => (await store.getAgent(id)) !== null,
  });
}

async function skillDigests(store: Pick<SkillStore, 'listSkills'>): Promise<Set<string>> {
  const digests = new Set<string>();
  for (let after: string | undefined; ;) {
    const page = await store.listSkills({ limit: 200, after });
    for (const skill of page.items) digests.add(skill.digest);
    if (page.next_cursor === null) return digests;
    after = page.next_cursor;
  }
}
