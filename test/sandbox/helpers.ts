/** Shared pieces of the sandbox tests: limits, loading fixtures, running a guest to its end. */
import { readFileSync } from 'node:fs';
import { fixture } from '../helpers/paths.js';
import type { ModuleHandle, RunHandle, RunLimits, RunRequest, RunResult, Sandbox } from '../../src/sandbox/types.js';
import { eventually } from '../helpers/eventually.js';

export const MIB = 1024 * 1024;

export function limits(overrides: Partial<RunLimits> = {}): RunLimits {
  return {
    timeoutMs: 10_000,
    memoryBytes: 64 * MIB,
    stdoutBytes: MIB,
    stderrTailBytes: 4096,
    writeBudgetBytes: 1024 * MIB,
    ...overrides,
  };
}

export function cGuest(name: string): Uint8Array {
  return readFileSync(fixture('c', 'sandbox', `${name}.wasm`));
}

export interface Finished {
  result: RunResult;
  stdout: string;
  stderr: string;
}

/** Starts a run that collects its output as text; `finished` settles with everything once it ends. */
export function start(
  pool: Pick<Sandbox, 'run'>,
  module: ModuleHandle,
  request: Partial<RunRequest> = {},
): { handle: RunHandle; finished: Promise<Finished>; stdoutSoFar(): string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const handle = pool.run(module, {
    args: ['guest'],
    env: [],
    preopens: [],
    limits: limits({ memoryBytes: module.memoryBytes }),
    onStdout: (chunk) => out.push(Buffer.from(chunk)),
    onStderr: (chunk) => err.push(Buffer.from(chunk)),
    ...request,
  });
  const finished = handle.result.then((result) => ({
    result,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  }));
  return { handle, finished, stdoutSoFar: () => Buffer.concat(out).toString('utf8') };
}

export async function runToEnd(
  pool: Pick<Sandbox, 'run'>,
  module: ModuleHandle,
  request: Partial<RunRequest> = {},
  stdin?: string,
): Promise<Finished> {
  const { handle, finished } = start(pool, module, request);
  if (stdin !== undefined) handle.writeStdin(Buffer.from(stdin));
  handle.closeStdin();
  return finished;
}

/** Resolves once `predicate` holds (test/helpers/eventually.ts: a generous ceiling, a hang guard). */
export async function until(predicate: () => boolean, ms?: number): Promise<void> {
  await eventually('the sandbox reaches the state awaited', predicate, (held) => held, { ms, everyMs: 5 });
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
