/**
 * An upload whose manifest (or SKILL.md) names no version is numbered by the store, inside the transaction that
 * adds it: several such uploads of one name at once, through the real server, each get a number of their own
 * and all succeed — on SQLite and on PostgreSQL, where the server's requests really do overlap in the database.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Secret } from '../../src/common/index.js';
import { PACKAGE_ENTRIES, packBundle } from '../../src/package/index.js';
import { startServer } from '../../src/app.js';
import type { SubakoServer } from '../../src/server/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { EXAMPLES, TEST_KEY, makeApi, skillDir, tempDir, type Api } from './helpers/harness.js';

const UPLOADS = 8;

/** The greet example under a manifest with no version; `n` makes each bundle's bytes its own. */
function unversionedGreet(n: number): string {
  const dir = tempDir('subako-unversioned-');
  cpSync(join(EXAMPLES, 'greet'), dir, { recursive: true });
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'greet', description: `Greets (upload ${n}).` }));
  return dir;
}

function unversionedSkill(n: number): string {
  const dir = skillDir('notes');
  writeFileSync(join(dir, 'refs', 'notes.txt'), `notes of upload ${n}`);
  return dir;
}

async function serve(database: TestDatabase | null): Promise<{ server: SubakoServer; api: Api }> {
  const { server, firstStart } = await startServer({
    dataDir: tempDir(), port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY },
    ...(database ? { database: new Secret(database.url) } : {}),
  });
  assert.ok(firstStart, 'a fresh database');
  return { server, api: makeApi(server.url, firstStart.apiKey) };
}

/** Uploads every bundle at once; answers the versions given, after checking each upload succeeded. */
async function uploadAtOnce(api: Api, path: string, bundles: Buffer[]): Promise<string[]> {
  const answers = await Promise.all(bundles.map((bundle) => api.call('POST', path, bundle)));
  for (const answer of answers) assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answers.map((answer) => String(answer.body.version));
}

const numbersUpTo = (n: number, from = 1): string[] => Array.from({ length: n }, (_, i) => String(from + i));
const byNumber = (versions: string[]): string[] => [...versions].sort((a, b) => Number(a) - Number(b));

for (const backend of ['SQLite', 'PostgreSQL'] as const) {
  describe(`unversioned uploads at once on ${backend}`, () => {
    let database: TestDatabase | null = null;
    let server: SubakoServer | undefined;
    let api: Api;
    after(async () => {
      await server?.close(5_000);
      await database?.drop();
    });

    it('gives each of several unversioned package uploads of one name its own number', async () => {
      if (backend === 'PostgreSQL') database = await createTestDatabase();
      ({ server, api } = await serve(database));
      const bundles = await Promise.all(numbersUpTo(UPLOADS).map((_, i) => packBundle(unversionedGreet(i), { only: PACKAGE_ENTRIES })));
      const versions = await uploadAtOnce(api, '/v1/packages', bundles);
      assert.deepEqual(byNumber(versions), numbersUpTo(UPLOADS), 'one number each, none twice');
      const listed = (await api.call('GET', '/v1/packages/greet')).body.versions as { version: string }[];
      assert.deepEqual(byNumber(listed.map((v) => v.version)), numbersUpTo(UPLOADS), 'every upload stored once');
    });

    it('gives each of several unversioned skill uploads of one name its own number, skipping one a SKILL.md took', async () => {
      const named = unversionedSkill(0);
      writeFileSync(join(named, 'SKILL.md'), '---\nname: notes\ndescription: A test skill.\nversion: 2\n---\nUse it well.\n');
      const first = await api.call('POST', '/v1/skills', await packBundle(named));
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const bundles = await Promise.all(numbersUpTo(UPLOADS).map((_, i) => packBundle(unversionedSkill(i + 1))));
      const versions = await uploadAtOnce(api, '/v1/skills', bundles);
      assert.deepEqual(byNumber(versions), numbersUpTo(UPLOADS, 3), 'one number each, none twice, "2" skipped');
      // And once more, with versions already there: the numbers go on from the latest.
      const more = await uploadAtOnce(api, '/v1/skills', await Promise.all([UPLOADS + 1, UPLOADS + 2].map((n) => packBundle(unversionedSkill(n)))));
      assert.deepEqual(byNumber(more), numbersUpTo(2, UPLOADS + 3));
    });
  });
}
