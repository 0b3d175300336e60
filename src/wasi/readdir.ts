/**
 * fd_readdir. A listing is taken when a read starts at cookie 0 (opendir, rewinddir) and kept on the
 * descriptor; entry i carries d_next = i + 1, so any cookie the guest got back (telldir/seekdir)
 * resumes exactly there however many calls the listing takes. `.` and `..` come first.
 * When the buffer is too small the last entry is cut at the buffer's end, as preview 1 asks; the
 * guest then reads again from that entry's cookie with a larger buffer.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { Errno } from './errno.js';
import { DIRENT_SIZE, Filetype } from './constants.js';
import type { DirDescriptor, DirListing } from './descriptors.js';
import type { FunctionFamily, WasiContext } from './context.js';
import { at } from './resolver.js';
import { filetypeOf } from './stat.js';

const encoder = new TextEncoder();

function takeListing(dir: DirDescriptor): DirListing {
  const names = ['.', '..'];
  const types = [Filetype.DIRECTORY, Filetype.DIRECTORY];
  for (const entry of readdirSync(at(dir.anchor, '.'), { withFileTypes: true })) {
    names.push(entry.name);
    types.push(filetypeOf(entry));
  }
  return { names, types, inodes: new Array(names.length) };
}

export function readdirFunctions(ctx: WasiContext): FunctionFamily {
  const { memory, table } = ctx;
  const header = new Uint8Array(DIRENT_SIZE);
  const headerView = new DataView(header.buffer);

  /**
   * The inode of an entry. `.` and `..` both report the directory's own inode: the real `..` of a
   * preopen lies outside the sandbox, and its inode is nothing the guest needs to know.
   */
  function inodeOf(dir: DirDescriptor, listing: DirListing, index: number): bigint {
    let inode = listing.inodes[index];
    if (inode === undefined) {
      const name = index < 2 ? '.' : listing.names[index];
      inode = lstatSync(at(dir.anchor, name), { bigint: true, throwIfNoEntry: false })?.ino ?? 0n;
      listing.inodes[index] = inode;
    }
    return inode;
  }

  return {
    fd_readdir(fd: number, buf: number, bufLen: number, cookie: bigint, bufusedPtr: number): number {
      buf >>>= 0;
      bufLen >>>= 0;
      memory.check(bufusedPtr >>> 0, 4);
      memory.check(buf, bufLen);
      const descriptor = table.get(fd);
      if (descriptor.kind !== 'dir') return Errno.NOTDIR;
      if (cookie === 0n || descriptor.listing === undefined) descriptor.listing = takeListing(descriptor);
      const listing = descriptor.listing;
      const { names, types } = listing;
      let used = 0;
      for (let index = cookie < BigInt(names.length) ? Number(cookie) : names.length;
        index < names.length && used < bufLen; index++) {
        const name = encoder.encode(names[index]);
        headerView.setBigUint64(0, BigInt(index + 1), true);
        headerView.setBigUint64(8, inodeOf(descriptor, listing, index), true);
        headerView.setUint32(16, name.length, true);
        headerView.setUint32(20, types[index], true); // d_type u8, then three bytes of padding
        const headerPart = Math.min(DIRENT_SIZE, bufLen - used);
        memory.u8.set(header.subarray(0, headerPart), buf + used);
        used += headerPart;
        const namePart = Math.min(name.length, bufLen - used);
        memory.u8.set(name.subarray(0, namePart), buf + used);
        used += namePart;
      }
      memory.setU32(bufusedPtr >>> 0, used);
      return Errno.SUCCESS;
    },
  };
}
