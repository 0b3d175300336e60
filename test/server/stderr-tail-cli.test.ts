/**
 * ABI 1's stderr-tail rule through `subako call` (a process of its own): a row prints the last 4 KiB of what the
 * module wrote, marker line included, in `crash.stderr` and in the model's text of `--json`, and exits 1.
 *
 * The command hands every row to the same FunctionHost, which runs the whole table (every reason × shape × when,
 * test/function/stderr-tail-rows.ts) in test/function/stderr-tail.test.ts, in both isolations. What the command
 * adds does not depend on the row: its `--json` output, its exit code, and the `--timeout` and `--memory` flags
 * the `timeout` and `out_of_memory` rows need. So a process per row of the whole table (44 processes, minutes on
 * a loaded machine) showed nothing more than these rows do: one of each kind of crash (decided by a stdout line,
 * by the run's end after an answer, by a run that never answers) and each row that goes through a flag. The
 * server's paths are in stderr-tail-server.test.ts and stderr-tail-nats.test.ts.
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
 * `--timeout` of the `timeout` row: `--timeout` bounds discovery too (at most 10 s, discovery's own deadline), so a
 * deadline under 10 s lets a loaded machine make discovery the thing that times out (it did, at 4 s, beside a
 * second suite); the guest spins until the deadline, so no longer than that either.
 */
const CLI_TIMEOUT_MS = 10_000;

/**
 * Runs `subako call <dir> crash <args> --json` and resolves with its printed outcome. Only the rows that need
 * them get the deadline and the small memory cap.
 */
function cliCall(dir: string, row: StderrRow): Promise<{ code: number | null; outcome: any }> {
  const limits = row.reason === 'timeout' ? ['--timeout', String(CLI_TIMEOUT_MS)]
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

/** The rows run through the command, by name (see the header). */
const THROUGH_THE_COMMAND = [
  'jsonrpc_error/many/after', // decided by what the module printed, its stderr written after the answer line
  'trap/one/before', // the run's end decides
  'exited_early/many/before', // a run that never answers
  'stdout_limit/one/before',
  'timeout/one/before', // --timeout
  'out_of_memory/many/before', // --memory
];

describe('the stderr tail through `subako call`', { concurrency: 2 }, () => {
  const dir = stderrTailPackageDir();
  after(() => rmSync(dir, { recursive: true, force: true }));
  const rows = THROUGH_THE_COMMAND.map((name) => STDERR_ROWS.find((row) => rowName(row) === name));
  test('the rows chosen for the command are rows of the table', () => {
    assert.deepEqual(rows.map((row) => row && rowName(row)), THROUGH_THE_COMMAND);
  });
  for (const row of rows.filter((r): r is StderrRow => r !== undefined)) {
    test(rowName(row), async () => {
      const { code, outcome } = await cliCall(dir, row);
      assert.equal(code, 1, `${rowName(row)}: a crash exits 1`);
      assert.equal(outcome.status, 'crash');
      assertRow(row, { reason: outcome.crash?.reason, stderr: outcome.crash?.stderr, modelText: textOf(outcome.model) });
    });
  }
});
