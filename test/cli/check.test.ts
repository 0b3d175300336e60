import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { main } from '../../src/cli/main.js';
import { fixture, REPO_ROOT } from '../helpers/paths.js';
import { wat } from '../helpers/wat.js';

/** Runs `subako ...args` in this process and captures what it writes to stdout and stderr as text. */
async function subako(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const captured = { stdout: '', stderr: '' };
  const originals = { stdout: process.stdout.write, stderr: process.stderr.write };
  // Only text is captured: the test runner's own reports pass through untouched.
  const capture = (stream: 'stdout' | 'stderr') => function (this: unknown, chunk: unknown, ...rest: unknown[]): boolean {
    if (typeof chunk === 'string') {
      captured[stream] += chunk;
      return true;
    }
    return (originals[stream] as (...a: unknown[]) => boolean).call(process[stream], chunk, ...rest);
  };
  process.stdout.write = capture('stdout') as typeof process.stdout.write;
  process.stderr.write = capture('stderr') as typeof process.stderr.write;
  try {
    const code = await main(['node', 'subako', ...args]);
    return { code, ...captured };
  } finally {
    process.stdout.write = originals.stdout;
    process.stderr.write = originals.stderr;
  }
}

let root: string;
let goodPackage: string;
let refusedModule: string;
let plainCommand: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'subako-cli-check-'));
  goodPackage = join(root, 'upper');
  await mkdir(goodPackage);
  await writeFile(join(goodPackage, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'upper', description: 'Upper-cases.', version: '1.0.0' }));
  await copyFile(join(REPO_ROOT, 'examples', 'packages', 'greet', 'module.wasm'), join(goodPackage, 'module.wasm'));
  plainCommand = join(root, 'command.wasm');
  await copyFile(fixture('c', 'toolchain', 'wasi-command.wasm'), plainCommand);
  refusedModule = join(root, 'threads.wasm');
  await writeFile(refusedModule, await wat('(module (memory 1 1 shared) (func (export "_start")))'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('subako check', () => {
  test('an accepted package exits 0 and says so', async () => {
    const { code, stdout } = await subako('check', goodPackage);
    assert.equal(code, 0);
    assert.match(stdout, /^accepted: package "upper" 1\.0\.0 .* with 1 tool:\n {2}greet — Greet someone by name\.\n$/);
  });

  test('discovery runs too: a module that passes the module checks but is no MCP server is refused', async () => {
    const { code, stdout } = await subako('check', plainCommand, '--json');
    assert.equal(code, 1);
    const report = JSON.parse(stdout);
    assert.equal(report.tools, null);
    assert.match(report.problems[0].code, /^discovery\.crash\./);
  });

  test('a refused module exits 1 and lists each problem with its code', async () => {
    const { code, stdout } = await subako('check', refusedModule);
    assert.equal(code, 1);
    assert.match(stdout, /^refused: .*threads\.wasm has 2 problems:/);
    assert.match(stdout, /\n {2}feature\.threads: /);
    assert.match(stdout, /\n {2}export\.missing: .*"memory"/);
  });

  test('--json prints exactly ok, problems, manifest and tools', async () => {
    const accepted = await subako('check', goodPackage, '--json');
    assert.equal(accepted.code, 0);
    const report = JSON.parse(accepted.stdout);
    assert.deepEqual(Object.keys(report), ['ok', 'problems', 'manifest', 'tools']);
    assert.deepEqual({ ...report, tools: report.tools.map((t: { name: string }) => t.name) }, {
      ok: true, problems: [], manifest: { abi: 1, name: 'upper', description: 'Upper-cases.', version: '1.0.0' }, tools: ['greet'],
    });
    const refused = await subako('check', refusedModule, '--json');
    assert.equal(refused.code, 1);
    const refusedReport = JSON.parse(refused.stdout);
    assert.deepEqual(Object.keys(refusedReport), ['ok', 'problems', 'manifest', 'tools']);
    assert.equal(refusedReport.ok, false);
    assert.equal(refusedReport.manifest, null);
    assert.equal(refusedReport.tools, null);
    assert.deepEqual(refusedReport.problems.map((p: { code: string }) => p.code).sort(), ['export.missing', 'feature.threads']);
    for (const p of refusedReport.problems) assert.deepEqual(Object.keys(p), ['code', 'message']);
  });

  test('a path that does not exist, or no path, is a usage error (exit 2)', async () => {
    const missing = await subako('check', join(root, 'nope.wasm'));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /does not exist/);
    assert.equal(missing.stdout, '');
    const noPath = await subako('check');
    assert.equal(noPath.code, 2);
  });

  test('the installed command (node bin/subako.js) checks the example package and exits 0', async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'check', join(REPO_ROOT, 'examples', 'packages', 'greet'), '--json']);
    const report = JSON.parse(stdout);
    assert.equal(report.ok, true);
    assert.equal(report.manifest.name, 'greet');
    const refused = await run(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'check', refusedModule]).catch((error) => error);
    assert.equal(refused.code, 1);
  });
});
