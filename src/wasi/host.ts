/**
 * The WASI preview 1 host: one instance per run, fully synchronous, built for a worker thread.
 *
 *   const host = new WasiHost(options);
 *   const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: host.imports });
 *   const exitCode = host.start(instance);
 *   host.close();
 *   host.reset(nextOptions);   // optional: another run on the same import object (a warm worker's)
 *
 * The import object is built once per host from the function families (a worker builds it once, not
 * once per run), and its names are checked against PREVIEW1_SIGNATURES, the same table the module
 * checks use, once per process. Every import runs inside a guard that turns bad guest input into an
 * errno; only ProcExit and the caller's own callback errors unwind.
 */
import { constants, openSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { WasiHostApi, WasiOptions } from './types.js';
import { ProcExit } from './types.js';
import { PREVIEW1_SIGNATURES } from './preview1.js';
import { errnoOf } from './errno.js';
import {
  DIR_READ_RIGHTS, DIR_WRITE_RIGHTS, FILE_READ_RIGHTS, FILE_WRITE_RIGHTS, STDIN_RIGHTS, STDOUT_RIGHTS,
} from './constants.js';
import { DescriptorTable } from './descriptors.js';
import { GuestMemory } from './memory.js';
import { EntryBudget } from './entry-budget.js';
import { CallerError, Clock, type FunctionFamily, type HostFunction, type WasiContext } from './context.js';
import { fdIoFunctions } from './fd-io.js';
import { fdMetaFunctions } from './fd-meta.js';
import { readdirFunctions } from './readdir.js';
import { pathOpenFunctions } from './path-open.js';
import { pathOpsFunctions } from './path-ops.js';
import { clockFunctions } from './clocks.js';
import { pollFunctions } from './poll.js';
import { procFunctions } from './proc.js';
import { WASI_ERROR_CODES, WasiSetupError } from './errors.js';

const encoder = new TextEncoder();

export class WasiHost implements WasiHostApi {
  readonly imports: Record<string, HostFunction>;
  private readonly context: WasiContext;

  constructor(options: WasiOptions) {
    this.context = {
      options, memory: new GuestMemory(), table: new DescriptorTable(), clock: new Clock(), entries: new EntryBudget(),
    };
    openDescriptors(this.context);
    this.imports = buildImports(this.context);
  }

  /**
   * Starts a new run on this host, with the same `imports` object: closes whatever the previous run
   * left open, forgets its memory, restarts the clocks and opens the new preopens. Nothing of the
   * previous run stays reachable from the guest. Throws WasiSetupError like the constructor; the host
   * can be reset again after that.
   */
  reset(options: WasiOptions): void {
    this.close();
    this.context.options = options;
    this.context.clock.reset();
    this.context.entries.reset();
    openDescriptors(this.context);
  }

  start(instance: WebAssembly.Instance): number {
    const { memory, _start: entry } = instance.exports;
    if (!(memory instanceof WebAssembly.Memory)) {
      throw new WasiSetupError(WASI_ERROR_CODES.noMemory, 'the module exports no memory named "memory"');
    }
    if (typeof entry !== 'function') {
      throw new WasiSetupError(WASI_ERROR_CODES.noStart, 'the module exports no "_start" function');
    }
    this.context.memory.bind(memory);
    try {
      (entry as () => void)();
      return 0;
    } catch (error) {
      if (error instanceof ProcExit) return error.code;
      throw error;
    }
  }

  close(): void {
    this.context.table.closeAll();
    this.context.memory.unbind();
  }
}

/** Stdio on 0, 1, 2, then the preopens on 3, 4, … in the order given. */
function openDescriptors(ctx: WasiContext): void {
  const { table } = ctx;
  table.add({ kind: 'stdio', stream: 0, flags: 0, rightsBase: STDIN_RIGHTS, rightsInheriting: 0 });
  table.add({ kind: 'stdio', stream: 1, flags: 0, rightsBase: STDOUT_RIGHTS, rightsInheriting: 0 });
  table.add({ kind: 'stdio', stream: 2, flags: 0, rightsBase: STDOUT_RIGHTS, rightsInheriting: 0 });
  for (const preopen of ctx.options.preopens) {
    // The guest name is only what fd_prestat_dir_name reports: function packages use absolute names
    // (/volume/tmp), plain WASI commands may use relative ones (the WASI test suite's `fs-tests.dir`).
    if (!isAbsolute(preopen.hostPath) || preopen.guestPath === '' || preopen.guestPath.includes('\0')) {
      table.closeAll();
      throw new WasiSetupError(WASI_ERROR_CODES.preopen,
        `preopen ${JSON.stringify(preopen.guestPath)} -> ${preopen.hostPath}: the host path must be absolute and the guest name non-empty, without NUL`);
    }
    const hostPath = resolve(preopen.hostPath);
    let fd: number;
    try {
      fd = openSync(hostPath, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch (cause) {
      table.closeAll();
      throw new WasiSetupError(WASI_ERROR_CODES.preopen,
        `preopen ${preopen.guestPath}: cannot open host directory ${hostPath} (${(cause as Error).message})`,
        { cause });
    }
    const readOnly = preopen.readOnly;
    const base = readOnly ? DIR_READ_RIGHTS : DIR_READ_RIGHTS | DIR_WRITE_RIGHTS;
    // A read-only preopen still lists the file write rights as inheritable: wasi-libc narrows what open() asks
    // for to them, so hiding them would turn open(O_WRONLY) into a read-only open that succeeds. With them,
    // path_open sees the write and answers EROFS, as a read-only mount does.
    table.add({
      kind: 'dir', anchor: { fd, hostPath }, readOnly, preopenName: encoder.encode(preopen.guestPath), flags: 0,
      rightsBase: base, rightsInheriting: base | FILE_READ_RIGHTS | FILE_WRITE_RIGHTS,
    });
  }
}

/** The families do not change at run time: their names are checked against the table once. */
let namesChecked = false;

function buildImports(ctx: WasiContext): Record<string, HostFunction> {
  const families: FunctionFamily[] = [
    fdIoFunctions(ctx), fdMetaFunctions(ctx), readdirFunctions(ctx), pathOpenFunctions(ctx),
    pathOpsFunctions(ctx), clockFunctions(ctx), pollFunctions(ctx), procFunctions(ctx),
  ];
  const imports: Record<string, HostFunction> = {};
  for (const family of families) {
    for (const [name, fn] of Object.entries(family)) imports[name] = guard(ctx, fn);
  }
  if (!namesChecked) checkNames(imports);
  return imports;
}

function checkNames(imports: Record<string, HostFunction>): void {
  const missing = Object.keys(PREVIEW1_SIGNATURES).filter((name) => !(name in imports));
  const extra = Object.keys(imports).filter((name) => !(name in PREVIEW1_SIGNATURES));
  if (missing.length > 0 || extra.length > 0) {
    // A build defect, not a guest's doing: the host and the signature table must list the same names.
    throw new Error(`WASI host out of step with PREVIEW1_SIGNATURES: missing ${missing}, extra ${extra}`);
  }
  namesChecked = true;
}

type AnyArgs = (...args: unknown[]) => number | void;

/**
 * Refreshes the memory views, runs the function, and answers an errno for anything the guest caused.
 * Fixed parameters (no rest array) keep the per-call cost to one call frame; preview 1 functions take
 * at most nine arguments.
 */
function guard(ctx: WasiContext, fn: HostFunction): HostFunction {
  const impl = fn as unknown as AnyArgs;
  const memory = ctx.memory;
  const wrapped = (a: unknown, b: unknown, c: unknown, d: unknown, e: unknown, f: unknown, g: unknown,
    h: unknown, i: unknown): number | void => {
    memory.refresh();
    try {
      return impl(a, b, c, d, e, f, g, h, i);
    } catch (error) {
      if (error instanceof CallerError) throw error.error;
      const errno = errnoOf(error);
      if (errno === undefined) throw error;
      return errno;
    }
  };
  return wrapped as unknown as HostFunction;
}
