/**
 * docs/security.md lists each guarantee with the test that attacks it: every test it names must exist, and
 * every attack test in test/hostile/ must back some guarantee there (an attack nobody lists is a guarantee
 * the page forgot).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

const page = readFileSync(join(REPO_ROOT, 'docs', 'security.md'), 'utf8');
const named = [...page.matchAll(/`(test\/[^`]+?\.test\.ts)`/g)].map((m) => m[1]);

describe('the security model page', () => {
  it('names only tests that exist', () => {
    assert.ok(named.length > 30, `the page names ${named.length} tests`);
    for (const path of named) {
      const files = path.includes('*')
        ? readdirSync(join(REPO_ROOT, path.slice(0, path.lastIndexOf('/')))).filter((f) => new RegExp(`^${path.slice(path.lastIndexOf('/') + 1).replace(/\./g, '\\.').replace('*', '.*')}$`).test(f))
        : [path];
      assert.ok(files.length > 0 && (path.includes('*') || existsSync(join(REPO_ROOT, path))), `${path} does not exist`);
    }
  });

  it('lists every attack in test/hostile/', () => {
    for (const file of readdirSync(join(REPO_ROOT, 'test', 'hostile')).filter((f) => f.endsWith('.test.ts'))) {
      assert.ok(named.includes(`test/hostile/${file}`), `test/hostile/${file} backs no guarantee on the page`);
    }
  });
});
