/**
 * A racer thread that acts as a hostile guest would on its own volume: it swaps the directory entry
 * `<parent>/<name>` between a real directory and a symbolic link, by renames only, as fast as it can, until
 * told to stop. With `anchored`, it works through a descriptor of `parent` held open, as a guest's preopen
 * is, so it follows the directory wherever the host moves it (a deleted volume moved to the trash).
 * `startSwapRacer` resolves once the racer is set up; `stop` says how many swaps it made, so a test can
 * show the race was really contested.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

export interface SwapRacerOptions {
  /** The directory that holds the swapped entry (inside the volume). */
  parent: string;
  /** The entry swapped: a real directory one moment, a symlink the next. */
  name: string;
  /** The symlink's text, e.g. `../../..` or an absolute path. */
  linkTarget: string;
  /** Files put in the real directory, so honest requests succeed too. */
  files?: Record<string, string | Uint8Array>;
  /** This many more files (`f0`, `f1`, …) in the real directory, to make removing it take a while. */
  fill?: number;
  /** Work through a descriptor of `parent` (as a guest does), not its path. */
  anchored?: boolean;
  /** Make the link again whenever it went (the code under attack may remove it). */
  remakeLink?: boolean;
  /** Remove a directory the code under attack made where the entry stood (output parents). */
  clearStray?: boolean;
}

export interface SwapRacer {
  /** Stops the thread; resolves with the number of full swap cycles it made. */
  stop(): Promise<number>;
}

export function startSwapRacer(options: SwapRacerOptions): Promise<SwapRacer> {
  const flag = new Int32Array(new SharedArrayBuffer(8));
  const worker = new Worker(new URL(import.meta.url), { workerData: { ...options, flag } });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', () => {
      resolve({
        stop: () => new Promise<number>((done, fail) => {
          Atomics.store(flag, 0, 1);
          worker.once('message', (cycles: number) => {
            void worker.terminate().then(() => done(cycles), fail);
          });
        }),
      });
    });
  });
}

function rename(from: string, to: string): boolean {
  try {
    renameSync(from, to);
    return true;
  } catch {
    return false;
  }
}

function quietly(action: () => void): void {
  try {
    action();
  } catch {
    // The racer only ever tries; what the code under attack did meanwhile decides.
  }
}

function race(options: SwapRacerOptions & { flag: Int32Array }): void {
  const fd = options.anchored ? openSync(options.parent, constants.O_RDONLY | constants.O_DIRECTORY) : -1;
  const parent = options.anchored ? `/proc/self/fd/${fd}` : options.parent;
  const entry = join(parent, options.name);
  const real = `${entry}.real`;
  const link = `${entry}.link`;
  mkdirSync(real, { recursive: true });
  for (const [file, text] of Object.entries(options.files ?? {})) writeFileSync(join(real, file), text);
  for (let i = 0; i < (options.fill ?? 0); i++) writeFileSync(join(real, `f${i}`), 'volume file');
  symlinkSync(options.linkTarget, link);
  parentPort!.postMessage('ready');
  let cycles = 0;
  while (Atomics.load(options.flag, 0) === 0) {
    rename(real, entry);
    rename(entry, real);
    if (!rename(link, entry)) {
      if (options.remakeLink) quietly(() => symlinkSync(options.linkTarget, link));
      if (options.clearStray) {
        quietly(() => {
          if (lstatSync(entry).isDirectory()) rmSync(entry, { recursive: true, force: true });
        });
      }
      continue;
    }
    rename(entry, link);
    cycles++;
  }
  if (!options.anchored) {
    // Leave the volume as we found it: a link itself is removed (rm never follows a top-level link).
    for (const path of [entry, link, real]) quietly(() => rmSync(path, { recursive: true, force: true }));
  }
  if (fd >= 0) closeSync(fd);
  parentPort!.postMessage(cycles);
}

if (!isMainThread && workerData?.flag instanceof Int32Array) race(workerData as SwapRacerOptions & { flag: Int32Array });
