/**
 * WASI preview 1 errno values (witx `errno`, u16) and the mapping from host (Node/libuv) error codes.
 * Every import answers one of these numbers; nothing but ProcExit and the stdout/stderr callbacks'
 * own errors ever leaves an import as a JavaScript exception.
 */
export const enum Errno {
  SUCCESS = 0, TOOBIG = 1, ACCES = 2, ADDRINUSE = 3, ADDRNOTAVAIL = 4, AFNOSUPPORT = 5, AGAIN = 6,
  ALREADY = 7, BADF = 8, BADMSG = 9, BUSY = 10, CANCELED = 11, CHILD = 12, CONNABORTED = 13,
  CONNREFUSED = 14, CONNRESET = 15, DEADLK = 16, DESTADDRREQ = 17, DOM = 18, DQUOT = 19, EXIST = 20,
  FAULT = 21, FBIG = 22, HOSTUNREACH = 23, IDRM = 24, ILSEQ = 25, INPROGRESS = 26, INTR = 27,
  INVAL = 28, IO = 29, ISCONN = 30, ISDIR = 31, LOOP = 32, MFILE = 33, MLINK = 34, MSGSIZE = 35,
  MULTIHOP = 36, NAMETOOLONG = 37, NETDOWN = 38, NETRESET = 39, NETUNREACH = 40, NFILE = 41,
  NOBUFS = 42, NODEV = 43, NOENT = 44, NOEXEC = 45, NOLCK = 46, NOLINK = 47, NOMEM = 48, NOMSG = 49,
  NOPROTOOPT = 50, NOSPC = 51, NOSYS = 52, NOTCONN = 53, NOTDIR = 54, NOTEMPTY = 55,
  NOTRECOVERABLE = 56, NOTSOCK = 57, NOTSUP = 58, NOTTY = 59, NXIO = 60, OVERFLOW = 61,
  OWNERDEAD = 62, PERM = 63, PIPE = 64, PROTO = 65, PROTONOSUPPORT = 66, PROTOTYPE = 67, RANGE = 68,
  ROFS = 69, SPIPE = 70, SRCH = 71, STALE = 72, TIMEDOUT = 73, TXTBSY = 74, XDEV = 75, NOTCAPABLE = 76,
}

/**
 * An errno raised deep inside a host function (a bad pointer, a path that escapes) and turned into the
 * import's return value by the guard. Deliberately not an Error: it is control flow, and skipping the
 * stack capture keeps failing calls (ENOENT probes are common) cheap.
 */
export class WasiErrno {
  constructor(readonly errno: Errno) {}
}

export const fail = (errno: Errno): never => {
  throw new WasiErrno(errno);
};

/** Host error codes (POSIX names, as Node reports them in `err.code`) to preview 1 errno. */
const HOST_CODES: Readonly<Record<string, Errno>> = {
  E2BIG: Errno.TOOBIG, EACCES: Errno.ACCES, EAGAIN: Errno.AGAIN, EWOULDBLOCK: Errno.AGAIN,
  EBADF: Errno.BADF, EBUSY: Errno.BUSY, EDQUOT: Errno.DQUOT, EEXIST: Errno.EXIST, EFAULT: Errno.FAULT,
  EFBIG: Errno.FBIG, EILSEQ: Errno.ILSEQ, EINTR: Errno.INTR, EINVAL: Errno.INVAL, EIO: Errno.IO,
  EISDIR: Errno.ISDIR, ELOOP: Errno.LOOP, EMFILE: Errno.MFILE, EMLINK: Errno.MLINK,
  ENAMETOOLONG: Errno.NAMETOOLONG, ENFILE: Errno.NFILE, ENODEV: Errno.NODEV, ENOENT: Errno.NOENT,
  ENOMEM: Errno.NOMEM, ENOSPC: Errno.NOSPC, ENOSYS: Errno.NOSYS, ENOTDIR: Errno.NOTDIR,
  ENOTEMPTY: Errno.NOTEMPTY, ENOTSUP: Errno.NOTSUP, EOPNOTSUPP: Errno.NOTSUP, ENOTTY: Errno.NOTTY,
  ENXIO: Errno.NXIO, EOVERFLOW: Errno.OVERFLOW, EPERM: Errno.PERM, EPIPE: Errno.PIPE,
  ERANGE: Errno.RANGE, EROFS: Errno.ROFS, ESPIPE: Errno.SPIPE, ESTALE: Errno.STALE,
  ETIMEDOUT: Errno.TIMEDOUT, ETXTBSY: Errno.TXTBSY, EXDEV: Errno.XDEV, ENOTSOCK: Errno.NOTSOCK,
};

/**
 * The errno for something a host function threw, or undefined when it is not ours to answer
 * (ProcExit, an abort thrown by the stdout callback, a bug): those propagate and end the run.
 */
export function errnoOf(error: unknown): Errno | undefined {
  if (error instanceof WasiErrno) return error.errno;
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== 'string') return undefined;
    // Node's own argument checks (ERR_INVALID_ARG_VALUE, ERR_OUT_OF_RANGE, …) reject guest input.
    if (code.startsWith('ERR_')) return Errno.INVAL;
    // A system call failed: only errors carrying `syscall` come from the host file system.
    if ((error as NodeJS.ErrnoException).syscall !== undefined) return HOST_CODES[code] ?? Errno.IO;
  }
  return undefined;
}
