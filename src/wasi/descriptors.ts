/**
 * The guest's descriptor table: what each WASI fd is (stdio stream, host file, host directory), its
 * host file descriptor, and the state WASI keeps per descriptor (offset, flags, rights, readdir snapshot).
 * Node has no lseek, so the file offset lives here and every read and write passes it explicitly.
 */
import { closeSync } from 'node:fs';
import { isSystemError } from '../common/lean.js';
import { Errno, fail } from './errno.js';
import type { Filetype } from './constants.js';
import type { Anchor } from './resolver.js';

/** A guest may hold at most this many descriptors, so it cannot exhaust the host process's fds. */
export const MAX_DESCRIPTORS = 512;

interface DescriptorBase {
  /** Fdflags (APPEND, NONBLOCK, …) as the guest set them. */
  flags: number;
  rightsBase: number;
  rightsInheriting: number;
}

export interface StdioDescriptor extends DescriptorBase {
  kind: 'stdio';
  stream: 0 | 1 | 2;
}

export interface FileDescriptor extends DescriptorBase {
  kind: 'file';
  hostFd: number;
  filetype: Filetype;
  /** Next read/write offset (fd_seek/fd_tell). */
  position: number;
  /** Opened under a read-only preopen. */
  readOnly: boolean;
}

/** A directory listing taken when a readdir starts at cookie 0; cookies index into it. */
export interface DirListing {
  names: string[];
  types: Filetype[];
  /** Inode numbers, looked up when an entry is first returned (a cut entry is returned again). */
  inodes: (bigint | undefined)[];
}

export interface DirDescriptor extends DescriptorBase {
  kind: 'dir';
  /** The open host directory: the root every path given with this descriptor resolves under. */
  anchor: Anchor;
  readOnly: boolean;
  /** The guest path bytes when this descriptor is a preopen (fd_prestat_get answers only for these). */
  preopenName?: Uint8Array;
  listing?: DirListing;
}

export type Descriptor = StdioDescriptor | FileDescriptor | DirDescriptor;

export class DescriptorTable {
  private readonly entries: (Descriptor | undefined)[] = [];

  /** The descriptor behind `fd`, or EBADF. */
  get(fd: number): Descriptor {
    const entry = this.entries[fd];
    return entry ?? fail(Errno.BADF);
  }

  /** A directory descriptor, for path_* calls: EBADF if closed, ENOTDIR if not a directory. */
  dir(fd: number): DirDescriptor {
    const entry = this.get(fd);
    return entry.kind === 'dir' ? entry : fail(Errno.NOTDIR);
  }

  /**
   * Places a descriptor at the lowest free number and returns that number. Past the limit it fails
   * with EMFILE and the caller still owns (and closes) the host fd.
   */
  add(descriptor: Descriptor): number {
    let fd = this.entries.indexOf(undefined);
    if (fd < 0) fd = this.entries.length;
    if (fd >= MAX_DESCRIPTORS) return fail(Errno.MFILE);
    this.entries[fd] = descriptor;
    return fd;
  }

  close(fd: number): void {
    const entry = this.get(fd);
    this.entries[fd] = undefined;
    closeHost(entry);
  }

  /** fd_renumber: `to` must be open; it is closed and `from` takes its number. */
  renumber(from: number, to: number): void {
    const source = this.get(from);
    const target = this.get(to);
    if (from === to) return;
    this.entries[to] = source;
    this.entries[from] = undefined;
    closeHost(target);
  }

  closeAll(): void {
    for (const entry of this.entries) if (entry !== undefined) closeHost(entry);
    this.entries.length = 0;
  }
}

function closeHost(descriptor: Descriptor): void {
  if (descriptor.kind === 'stdio') return;
  try {
    closeSync(descriptor.kind === 'dir' ? descriptor.anchor.fd : descriptor.hostFd);
  } catch (error) {
    if (!isSystemError(error)) throw error; // expected: EBADF, EIO: the fd is released either way
    // Already gone (the host fd is ours alone); nothing to undo.
  }
}
