/**
 * Preview 1 constants and struct layouts (witx `typenames.witx`). Offsets are byte offsets in guest
 * memory, little-endian; every struct is laid out with natural alignment.
 */

export const enum Filetype {
  UNKNOWN = 0, BLOCK_DEVICE = 1, CHARACTER_DEVICE = 2, DIRECTORY = 3, REGULAR_FILE = 4,
  SOCKET_DGRAM = 5, SOCKET_STREAM = 6, SYMBOLIC_LINK = 7,
}

export const enum Fdflags { APPEND = 1, DSYNC = 2, NONBLOCK = 4, RSYNC = 8, SYNC = 16 }
export const FDFLAGS_ALL = 31;

export const enum Oflags { CREAT = 1, DIRECTORY = 2, EXCL = 4, TRUNC = 8 }
export const OFLAGS_ALL = 15;

export const LOOKUP_SYMLINK_FOLLOW = 1;

export const enum Fstflags { ATIM = 1, ATIM_NOW = 2, MTIM = 4, MTIM_NOW = 8 }

export const enum Whence { SET = 0, CUR = 1, END = 2 }

export const enum ClockId { REALTIME = 0, MONOTONIC = 1, PROCESS_CPUTIME = 2, THREAD_CPUTIME = 3 }

export const enum EventType { CLOCK = 0, FD_READ = 1, FD_WRITE = 2 }
export const SUBCLOCK_ABSTIME = 1;
export const EVENT_FD_READWRITE_HANGUP = 1;

export const ADVICE_MAX = 5; // normal, sequential, random, willneed, dontneed, noreuse
export const PREOPENTYPE_DIR = 0;

/**
 * Rights (u64 in the ABI, but every defined bit is below 2^30, so a JS number holds them exactly and
 * checks stay cheap; they are widened to BigInt only where written to guest memory).
 */
export const enum Right {
  FD_DATASYNC = 1 << 0, FD_READ = 1 << 1, FD_SEEK = 1 << 2, FD_FDSTAT_SET_FLAGS = 1 << 3,
  FD_SYNC = 1 << 4, FD_TELL = 1 << 5, FD_WRITE = 1 << 6, FD_ADVISE = 1 << 7, FD_ALLOCATE = 1 << 8,
  PATH_CREATE_DIRECTORY = 1 << 9, PATH_CREATE_FILE = 1 << 10, PATH_LINK_SOURCE = 1 << 11,
  PATH_LINK_TARGET = 1 << 12, PATH_OPEN = 1 << 13, FD_READDIR = 1 << 14, PATH_READLINK = 1 << 15,
  PATH_RENAME_SOURCE = 1 << 16, PATH_RENAME_TARGET = 1 << 17, PATH_FILESTAT_GET = 1 << 18,
  PATH_FILESTAT_SET_SIZE = 1 << 19, PATH_FILESTAT_SET_TIMES = 1 << 20, FD_FILESTAT_GET = 1 << 21,
  FD_FILESTAT_SET_SIZE = 1 << 22, FD_FILESTAT_SET_TIMES = 1 << 23, PATH_SYMLINK = 1 << 24,
  PATH_REMOVE_DIRECTORY = 1 << 25, PATH_UNLINK_FILE = 1 << 26, POLL_FD_READWRITE = 1 << 27,
  SOCK_SHUTDOWN = 1 << 28, SOCK_ACCEPT = 1 << 29,
}

/** Rights that read a regular file. */
export const FILE_READ_RIGHTS = Right.FD_READ | Right.FD_SEEK | Right.FD_TELL | Right.FD_ADVISE |
  Right.FD_FILESTAT_GET | Right.POLL_FD_READWRITE | Right.FD_FDSTAT_SET_FLAGS | Right.FD_SYNC;
/** Rights that change a regular file. */
export const FILE_WRITE_RIGHTS = Right.FD_DATASYNC | Right.FD_WRITE | Right.FD_ALLOCATE |
  Right.FD_FILESTAT_SET_SIZE | Right.FD_FILESTAT_SET_TIMES;
/** Rights that path_open reads as "open for writing" (the same grouping wasi-libc uses). */
export const WRITE_INTENT_RIGHTS = Right.FD_DATASYNC | Right.FD_WRITE | Right.FD_ALLOCATE |
  Right.FD_FILESTAT_SET_SIZE;
/** Rights that read a directory and what is under it. */
export const DIR_READ_RIGHTS = Right.FD_READDIR | Right.PATH_OPEN | Right.PATH_READLINK |
  Right.PATH_FILESTAT_GET | Right.FD_FILESTAT_GET | Right.FD_FDSTAT_SET_FLAGS | Right.FD_SYNC |
  Right.FD_ADVISE;
/** Rights that change a directory or what is under it. */
export const DIR_WRITE_RIGHTS = Right.PATH_CREATE_DIRECTORY | Right.PATH_CREATE_FILE |
  Right.PATH_LINK_SOURCE | Right.PATH_LINK_TARGET | Right.PATH_RENAME_SOURCE |
  Right.PATH_RENAME_TARGET | Right.PATH_FILESTAT_SET_SIZE | Right.PATH_FILESTAT_SET_TIMES |
  Right.FD_FILESTAT_SET_TIMES | Right.PATH_SYMLINK | Right.PATH_REMOVE_DIRECTORY |
  Right.PATH_UNLINK_FILE | Right.FD_DATASYNC;
export const STDIN_RIGHTS = Right.FD_READ | Right.POLL_FD_READWRITE | Right.FD_FILESTAT_GET |
  Right.FD_FDSTAT_SET_FLAGS;
export const STDOUT_RIGHTS = Right.FD_WRITE | Right.POLL_FD_READWRITE | Right.FD_FILESTAT_GET |
  Right.FD_FDSTAT_SET_FLAGS;

/** iovec / ciovec: { buf: u32, buf_len: u32 }. */
export const IOVEC_SIZE = 8;

/** fdstat: filetype u8 @0, flags u16 @2, rights_base u64 @8, rights_inheriting u64 @16. */
export const FDSTAT_SIZE = 24;

/** filestat: dev @0, ino @8, filetype u8 @16, nlink @24, size @32, atim @40, mtim @48, ctim @56. */
export const FILESTAT_SIZE = 64;

/** prestat: tag u8 @0, dir name length u32 @4. */
export const PRESTAT_SIZE = 8;

/** dirent header: d_next u64 @0, d_ino u64 @8, d_namlen u32 @16, d_type u8 @20; the name follows. */
export const DIRENT_SIZE = 24;

/**
 * subscription (48 bytes): userdata u64 @0, tag u8 @8, then the union at @16 —
 * clock: id u32 @16, timeout u64 @24, precision u64 @32, flags u16 @40; fd_readwrite: fd u32 @16.
 */
export const SUBSCRIPTION_SIZE = 48;

/** event (32 bytes): userdata u64 @0, error u16 @8, type u8 @10, nbytes u64 @16, flags u16 @24. */
export const EVENT_SIZE = 32;
