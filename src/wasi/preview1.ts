/**
 * Every function of `wasi_snapshot_preview1` with its core WebAssembly signature. One list, two uses:
 * the host (`host.ts`) implements exactly these names, and the module checks accept exactly these
 * imports, so the checker and the host can never disagree.
 */
export type ValType = 'i32' | 'i64';

export interface FuncSignature {
  params: readonly ValType[];
  results: readonly ValType[];
}

const I = 'i32' as const;
const L = 'i64' as const;
const sig = (params: ValType[], results: ValType[] = [I]): FuncSignature => ({ params, results });

export const WASI_MODULE = 'wasi_snapshot_preview1';

export const PREVIEW1_SIGNATURES: Readonly<Record<string, FuncSignature>> = Object.freeze({
  args_get: sig([I, I]),
  args_sizes_get: sig([I, I]),
  environ_get: sig([I, I]),
  environ_sizes_get: sig([I, I]),
  clock_res_get: sig([I, I]),
  clock_time_get: sig([I, L, I]),
  fd_advise: sig([I, L, L, I]),
  fd_allocate: sig([I, L, L]),
  fd_close: sig([I]),
  fd_datasync: sig([I]),
  fd_fdstat_get: sig([I, I]),
  fd_fdstat_set_flags: sig([I, I]),
  fd_fdstat_set_rights: sig([I, L, L]),
  fd_filestat_get: sig([I, I]),
  fd_filestat_set_size: sig([I, L]),
  fd_filestat_set_times: sig([I, L, L, I]),
  fd_pread: sig([I, I, I, L, I]),
  fd_prestat_get: sig([I, I]),
  fd_prestat_dir_name: sig([I, I, I]),
  fd_pwrite: sig([I, I, I, L, I]),
  fd_read: sig([I, I, I, I]),
  fd_readdir: sig([I, I, I, L, I]),
  fd_renumber: sig([I, I]),
  fd_seek: sig([I, L, I, I]),
  fd_sync: sig([I]),
  fd_tell: sig([I, I]),
  fd_write: sig([I, I, I, I]),
  path_create_directory: sig([I, I, I]),
  path_filestat_get: sig([I, I, I, I, I]),
  path_filestat_set_times: sig([I, I, I, I, L, L, I]),
  path_link: sig([I, I, I, I, I, I, I]),
  path_open: sig([I, I, I, I, I, L, L, I, I]),
  path_readlink: sig([I, I, I, I, I, I]),
  path_remove_directory: sig([I, I, I]),
  path_rename: sig([I, I, I, I, I, I]),
  path_symlink: sig([I, I, I, I, I]),
  path_unlink_file: sig([I, I, I]),
  poll_oneoff: sig([I, I, I, I]),
  proc_exit: sig([I], []),
  proc_raise: sig([I]),
  sched_yield: sig([]),
  random_get: sig([I, I]),
  sock_accept: sig([I, I, I]),
  sock_recv: sig([I, I, I, I, I, I]),
  sock_send: sig([I, I, I, I, I]),
  sock_shutdown: sig([I, I]),
});
