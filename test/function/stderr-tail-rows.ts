/**
 * The table of the stderr-tail rule ("the model is told the function crashed, with the last 4 KiB of
 * stderr"): every crash reason × every way the stderr was written, as the stderr_tail guest
 * (test/fixtures/c/mcp/stderr_tail.c) writes it, and the check each path of a call must pass for a row.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixture } from '../helpers/paths.js';

export const STDERR_TAIL_WASM = readFileSync(fixture('c', 'mcp', 'stderr_tail.wasm'));

/** The tail the ABI keeps. */
export const TAIL_BYTES = 4096;

/**
 * Limits that every path of the table runs with: a deadline short enough for the `timeout` rows and a
 * memory cap small enough for the `out_of_memory` ones, both far from what the other rows need.
 */
export const TABLE_LIMITS = { callTimeoutMs: 4_000, memoryBytes: 64 << 20 };

export interface StderrRow {
  reason: string;
  /** `one`: the whole stderr in one write; `many`: one write per line. */
  shape: 'one' | 'many';
  /** `before` the line or act that decides the crash; `after` the answer line. */
  when: 'before' | 'after';
}

/** Reasons decided from what the module wrote on stdout: the stderr can come before or after that line. */
const FROM_STDOUT = ['jsonrpc_error', 'result_type', 'not_jsonrpc', 'unknown_id', 'module_request', 'bad_result'];
/** Reasons of the run's end that can follow a fine answer. */
const AFTER_AN_ANSWER = ['exit_status', 'no_exit', 'trap'];
/** Reasons of a run that never answers. */
const WITHOUT_AN_ANSWER = ['exited_early', 'timeout', 'out_of_memory', 'stdout_limit'];

export const STDERR_ROWS: readonly StderrRow[] = [
  ...[...FROM_STDOUT, ...AFTER_AN_ANSWER].flatMap((reason) => (['before', 'after'] as const).flatMap((when) =>
    (['one', 'many'] as const).map((shape) => ({ reason, shape, when })))),
  ...WITHOUT_AN_ANSWER.flatMap((reason) => (['one', 'many'] as const).map((shape) => ({ reason, shape, when: 'before' as const }))),
];

export const rowName = (row: StderrRow): string => `${row.reason}/${row.shape}/${row.when}`;
export const rowArguments = (row: StderrRow): Record<string, string> => ({ reason: row.reason, shape: row.shape, when: row.when });

/** Everything the guest writes to stderr for a row (stderr_tail.c's make_stderr). */
export function writtenStderr(row: StderrRow): string {
  const name = rowName(row);
  let text = '';
  for (let i = 0; i < 400; i++) text += `stderr_tail ${name} line ${String(i).padStart(3, '0')}: the module explains what it is doing\n`;
  return `${text}END ${name}\n`;
}

/** What the crash report must hold: the last 4 KiB of it (the guest writes ASCII: bytes and characters agree). */
export function expectedTail(row: StderrRow): string {
  const written = writtenStderr(row);
  assert.ok(written.length > 3 * TAIL_BYTES, 'the guest writes several times the tail');
  return written.slice(-TAIL_BYTES);
}

/** What a path shows of a crashed call: the reason, the stderr of the crash report (when it shows it), the model's text. */
export interface SeenCrash {
  reason: string | undefined;
  stderr?: string;
  modelText: string;
}

export function assertRow(row: StderrRow, seen: SeenCrash): void {
  const tail = expectedTail(row);
  const where = rowName(row);
  assert.equal(seen.reason, row.reason, `${where}: the crash reason`);
  if (seen.stderr !== undefined) assert.equal(seen.stderr, tail, `${where}: crash.stderr is the last 4 KiB of what the module wrote`);
  assert.ok(seen.modelText.includes(`The last of its stderr:\n${tail}`), `${where}: the model is told the last 4 KiB of stderr, got: ${seen.modelText.slice(0, 300)}`);
  assert.ok(seen.modelText.includes(`END ${where}\n`), `${where}: the marker line reaches the model`);
  assert.ok(!seen.modelText.includes('It wrote nothing to stderr'), `${where}: the model is not told a falsehood`);
}

/** A package directory of the stderr_tail guest, for the CLI and the server paths. */
export function stderrTailPackageDir(name = 'tail'): string {
  const dir = mkdtempSync(join(tmpdir(), 'subako-stderr-tail-'));
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name, description: 'Crashes after writing a known stderr.', version: '1.0.0' }));
  cpSync(fixture('c', 'mcp', 'stderr_tail.wasm'), join(dir, 'module.wasm'));
  return dir;
}
