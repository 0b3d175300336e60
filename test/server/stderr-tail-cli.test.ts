/**
 * ABI 1's stderr-tail rule through `subako call` (a process of its own, guests in its worker threads): each row
 * of the table (test/function/stderr-tail-rows.ts) prints the last 4 KiB of what the module wrote, marker line
 * included, in `crash.stderr` and in the model's text of `--json`. The server's paths are in
 * stderr-tail-server.test.ts and stderr-tail-nats.test.ts.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { assertRow, rowArguments, rowName, STDERR_ROWS, stderrTailPackageDir, TABLE_LIMITS, type StderrRow } from '../function/stderr-tail-rows.js';
import { textOf } from './helpers/stderr-tail.js';

/**
 * Runs `subako call <dir> crash <args> --json` and resolves with its printed outcome. Only the rows that need
 * them get the short deadline and the small memory cap: `--timeout` bounds discovery too, and a loaded machine
 * must not make discovery the thing that times out.
 */
function cliCall(dir: string, row: StderrRow): Promise<{ code: number | null; outcome: any }> {
  const limits = row.reason === 'timeout' ? ['--timeout', String(TABLE_LIMITS.callTimeoutMs)]
    : row.reason === 'out_of_memory' ? ['--memory', String(TABLE_LIMITS.memoryBytes >> 20)] : [];
  const argv = [join(REPO_ROOT, 'bin', 'subako.js'), 'call', dir, 'crash', JSON.stringify(rowArguments(row)), '--json', ...limits];
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => { out += chunk; });
  child.stderr.on('data', (chunk) => { err += chunk; });
  // Stopped by its pid if the file ends first (a timeout of the runner).
  const stop = (): void => { child.kill('SIGKILL'); };
  process.once('exit', stop);
  return new Promise((resolve, reject) => child.on('exit', (code) => {
    process.off('exit', stop);
    try {
      resolve({ code, outcome: JSON.parse(out) });
    } catch {
      reject(new Error(`subako call printed no JSON (exit ${code}): ${out.slice(0, 300)} ${err.slice(0, 300)}`));
    }
  }));
}

describe('the stderr tail through `subako call`', { concurrency: 2 }, () => {
  const dir = stderrTailPackageDir();
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const row of STDERR_ROWS) {
    test(rowName(row), async () => {
      const { code, outcome } = await cliCall(dir, row);
      assert.equal(code, 1, `${rowName(row)}: a crash exits 1`);
      assert.equal(outcome.status, 'crash');
      assertRow(row, { reason: outcome.crash?.reason, stderr: outcome.crash?.stderr, modelText: textOf(outcome.model) });
    });
  }
});
