/**
 * The naive host for comparison: one new Node process per call, running the module with node:wasi and the
 * request on stdin. Spawned by the benchmark; prints the guest's stdout.
 */
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

const [modulePath, stdinPath] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: ['echo'], env: {}, stdin: Number(stdinPath), returnOnExit: true });
const module = await WebAssembly.compile(readFileSync(modulePath));
const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
process.exitCode = wasi.start(instance);
