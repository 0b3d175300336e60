/** Host stat results in preview 1 terms: filetypes and the filestat struct. */
import type { BigIntStats, Dirent, Stats } from 'node:fs';
import { FILESTAT_SIZE, Filetype } from './constants.js';
import type { GuestMemory } from './memory.js';

export function filetypeOf(stat: Stats | BigIntStats | Dirent): Filetype {
  if (stat.isFile()) return Filetype.REGULAR_FILE;
  if (stat.isDirectory()) return Filetype.DIRECTORY;
  if (stat.isSymbolicLink()) return Filetype.SYMBOLIC_LINK;
  if (stat.isCharacterDevice()) return Filetype.CHARACTER_DEVICE;
  if (stat.isBlockDevice()) return Filetype.BLOCK_DEVICE;
  if (stat.isSocket()) return Filetype.SOCKET_STREAM;
  return Filetype.UNKNOWN;
}

/** Writes a filestat (FILESTAT_SIZE bytes) at `ptr`; `stat` undefined writes the one of a character device (stdio). */
export function writeFilestat(memory: GuestMemory, ptr: number, stat: BigIntStats | undefined): void {
  memory.check(ptr, FILESTAT_SIZE);
  memory.u8.fill(0, ptr, ptr + FILESTAT_SIZE);
  const view = memory.view;
  if (stat === undefined) {
    view.setUint8(ptr + 16, Filetype.CHARACTER_DEVICE);
    return;
  }
  view.setBigUint64(ptr, stat.dev, true);
  view.setBigUint64(ptr + 8, stat.ino, true);
  view.setUint8(ptr + 16, filetypeOf(stat));
  view.setBigUint64(ptr + 24, stat.nlink, true);
  view.setBigUint64(ptr + 32, stat.size, true);
  view.setBigUint64(ptr + 40, stat.atimeNs, true);
  view.setBigUint64(ptr + 48, stat.mtimeNs, true);
  view.setBigUint64(ptr + 56, stat.ctimeNs, true);
}

const NS_PER_S = 1_000_000_000n;

/** Nanoseconds since the epoch as the seconds (with fraction) Node's utimes functions take. */
export function nsToSeconds(ns: bigint): number {
  return Number(ns / NS_PER_S) + Number(ns % NS_PER_S) / 1e9;
}

/** A guest u64 offset or size as a JS number, or undefined when it does not fit exactly. */
export function toSafeNumber(value: bigint): number | undefined {
  return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
}

/**
 * The access and modification times a set_times call asks for (fstflags ATIM/ATIM_NOW/MTIM/MTIM_NOW),
 * in seconds. A time the flags leave alone keeps its current value, read from `current` only then
 * (Node's utimes cannot omit one). Precision: Node passes seconds as a double, so about 0.25 µs.
 */
export function requestedTimes(
  fstflags: number, atim: bigint, mtim: bigint, now: bigint, current: () => BigIntStats,
): [number, number] | undefined {
  if (fstflags & ~15) return undefined;
  if ((fstflags & 1) && (fstflags & 2)) return undefined; // ATIM with ATIM_NOW
  if ((fstflags & 4) && (fstflags & 8)) return undefined; // MTIM with MTIM_NOW
  let stat: BigIntStats | undefined;
  const pick = (set: boolean, setNow: boolean, value: bigint, kept: (s: BigIntStats) => bigint): number => {
    if (setNow) return nsToSeconds(now);
    if (set) return nsToSeconds(value);
    stat ??= current();
    return nsToSeconds(kept(stat));
  };
  return [
    pick((fstflags & 1) !== 0, (fstflags & 2) !== 0, atim, (s) => s.atimeNs),
    pick((fstflags & 4) !== 0, (fstflags & 8) !== 0, mtim, (s) => s.mtimeNs),
  ];
}
