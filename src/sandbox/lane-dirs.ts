/**
 * The directories lane sockets live in: one per sandbox, made 0700 by mkdtemp, named after the process that
 * made it (`subako-lanes-<pid>-XXXXXX`). A server killed outright cannot remove its own; the next one to make a
 * directory in the same place removes those whose process has ended — only this user's, only real directories
 * (never what a symlink points at), never one whose process still runs (a pid reused by another process keeps
 * it: a leftover, never a loss).
 */
import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const PREFIX = 'subako-lanes-';
const NAMED = /^subako-lanes-(\d+)-[A-Za-z0-9]{6}$/;

/** A new directory for this process's lane socket, under `parent`; leftovers of ended processes there go first. */
export function makeLaneDir(parent: string): string {
  removeLeftovers(parent);
  return mkdtempSync(join(parent, `${PREFIX}${process.pid}-`));
}

function removeLeftovers(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return; // mkdtemp says what is wrong with the place
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = NAMED.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || processRuns(Number(pid))) continue;
    const path = join(parent, name);
    try {
      const stat = lstatSync(path);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone meanwhile, or not ours to remove: a leftover stays a leftover.
    }
  }
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
