/**
 * `pack` and `push` fit together (issue 14, points 6 and 7): pack refuses what check refuses, with the same
 * problems; it bundles only the manifest, module.wasm and assets/ as <name>-<version>.tar.gz and prints the
 * path, which push takes as printed; push --agent publishes the agent's next version, and sessions already
 * started keep theirs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBundle } from '../../src/package/index.js';
import { EXAMPLES, spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { fixture } from '../helpers/paths.js';
import { checkProblems, scratchDir, subako } from './helpers.js';

/** A copy of the greet example as an author's project: sources, build files and assets beside the package. */
function greetProject(version: string): string {
  const dir = scratchDir('greet');
  cpSync(join(EXAMPLES, 'greet'), dir, { recursive: true });
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'greet', description: 'Greets.', version }));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'main.c'), 'int main(void) { return 0; }\n');
  writeFileSync(join(dir, 'README.md'), '# greet\n');
  mkdirSync(join(dir, 'assets', 'fonts'), { recursive: true });
  writeFileSync(join(dir, 'assets', 'fonts', 'note.txt'), 'an asset');
  return dir;
}

describe('subako pack', () => {
  test('a directory check refuses is refused with the same problems, exit 1, and nothing is written', async () => {
    const dir = scratchDir('refused');
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 2, name: 'Bad Name', description: 'x' }));
    writeFileSync(join(dir, 'module.wasm'), Buffer.from('not wasm'));
    const cwd = scratchDir('cwd');
    const run = await subako(['pack', dir], { cwd });
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    const expected = await checkProblems(dir);
    assert.ok(expected.length >= 3, expected.join('\n'));
    for (const problem of expected) assert.ok(run.stderr.includes(problem), `pack does not say: ${problem}\n${run.stderr}`);
    assert.deepEqual(readdirSync(cwd), []);
  });

  test('a directory whose module discovery refuses is refused too (check runs discovery, so pack does)', async () => {
    const dir = scratchDir('no-tools');
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'plain', description: 'A WASI command, not an MCP server.' }));
    cpSync(fixture('c', 'wasi', 'stdio.wasm'), join(dir, 'module.wasm'));
    const expected = await checkProblems(dir);
    assert.ok(expected.length > 0);
    const run = await subako(['pack', dir], { cwd: scratchDir('cwd') });
    assert.equal(run.code, 1);
    for (const problem of expected) assert.ok(run.stderr.includes(problem), `pack does not say: ${problem}\n${run.stderr}`);
  });

  test('writes <name>-<version>.tar.gz in the current directory holding only the manifest, module.wasm and assets/, and prints its path', async () => {
    const dir = greetProject('1.2.3');
    const cwd = scratchDir('cwd');
    const run = await subako(['pack', dir], { cwd });
    assert.equal(run.code, 0, run.stderr);
    const path = join(cwd, 'greet-1.2.3.tar.gz');
    assert.equal(run.stdout, `${path}\n`);
    const contents = await readBundle(readFileSync(path));
    assert.deepEqual(contents.files.map((f) => f.path).sort(), ['assets/fonts/note.txt', 'module.wasm', 'subako-package.json']);
  });

  test('-o FILE writes there instead', async () => {
    const out = join(scratchDir('out'), 'custom.tgz');
    const run = await subako(['pack', greetProject('1.0.0'), '-o', out]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${out}\n`);
    assert.ok(existsSync(out));
  });
});

describe('subako push', () => {
  let server: ChildServer;
  let dataDir: string;
  before(async () => {
    dataDir = tempDir();
    server = await spawnServe(dataDir);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });
  const push = (...args: string[]) => subako(['push', ...args, '--server', server.url, '--api-key', server.apiKey]);

  test('takes the path pack printed, and prints name@version and the tools the server accepted', async () => {
    const cwd = scratchDir('cwd');
    const packed = await subako(['pack', greetProject('2.0.0')], { cwd });
    const run = await push(packed.stdout.trim());
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^package greet@2\.0\.0 published\n {2}greet: /);
  });

  test('takes a directory: it is checked and packed as pack does', async () => {
    const run = await push(greetProject('2.1.0'));
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^package greet@2\.1\.0 published\n/);
    const listed = await server.call('GET', '/v1/packages/greet/versions/2.1.0');
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
  });

  test('a directory check refuses is refused before anything is sent, with the same problems', async () => {
    const dir = scratchDir('refused');
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'never-sent', description: 'No module.' }));
    const run = await push(dir);
    assert.equal(run.code, 1);
    for (const problem of await checkProblems(dir)) assert.ok(run.stderr.includes(problem), run.stderr);
    assert.equal((await server.call('GET', '/v1/packages/never-sent')).status, 404);
  });

  test('--agent publishes the agent\'s next version with the pushed package; sessions already started keep theirs', async () => {
    const agentId = server.agentId!;
    const before = (await server.call('GET', `/v1/agents/${agentId}`)).body;
    const old = await server.call('POST', `/v1/agents/${agentId}/sessions`, {});
    assert.equal(old.status, 201);
    const run = await push(greetProject('3.0.0'), '--agent', agentId);
    assert.equal(run.code, 0, run.stderr);
    const next = before.version + 1;
    assert.match(run.stdout, new RegExp(`agent ${agentId} version ${next}: greet@3\\.0\\.0 \\(was [^)]+\\); sessions already started keep version ${before.version}, new sessions get ${next}`));
    const after = (await server.call('GET', `/v1/agents/${agentId}`)).body;
    assert.equal(after.version, next);
    assert.equal(after.spec.tools.find((t: { package: string }) => t.package === 'greet').version, '3.0.0');
    // The rest of the spec is as it was.
    assert.deepEqual(after.spec.skills, before.spec.skills);
    assert.deepEqual(after.spec.mcp_servers, before.spec.mcp_servers);
    assert.equal((await server.call('GET', `/v1/sessions/${old.body.id}`)).body.agent_version, before.version);
    const fresh = await server.call('POST', `/v1/agents/${agentId}/sessions`, {});
    assert.equal(fresh.body.agent_version, next);
  });

  test('--agent again with the same package version: nothing new is published, and it says so', async () => {
    const agentId = server.agentId!;
    const version = (await server.call('GET', `/v1/agents/${agentId}`)).body.version;
    const run = await push(greetProject('3.0.0'), '--agent', agentId);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^package greet@3\.0\.0 already published\n/);
    assert.match(run.stdout, new RegExp(`agent ${agentId} already grants greet@3\\.0\\.0 \\(version ${version}\\); no new version published`));
    assert.equal((await server.call('GET', `/v1/agents/${agentId}`)).body.version, version);
  });

  test('a skill directory needs --skill, and --skill a skill directory: usage errors before anything is sent', async () => {
    const skill = scratchDir('skill');
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: howto\ndescription: A skill.\n---\nUse it.\n');
    const asPackage = await push(skill);
    assert.equal(asPackage.code, 2);
    assert.match(asPackage.stderr, /is a skill directory \(SKILL\.md\); push it with --skill/);
    const asSkill = await push(greetProject('4.0.0'), '--skill');
    assert.equal(asSkill.code, 2);
    assert.match(asSkill.stderr, /push a package without --skill/);
    assert.equal((await server.call('GET', '/v1/packages/greet/versions/4.0.0')).status, 404);
  });

  test('--agent with an agent that does not exist: the package is published, the agent step fails with exit 1', async () => {
    const run = await push(greetProject('3.1.0'), '--agent', 'agt_0000000000000000');
    assert.equal(run.code, 1);
    assert.match(run.stdout, /package greet@3\.1\.0 published/);
    assert.match(run.stderr, /agent agt_0000000000000000 refused \(HTTP 404\)/);
  });
});
