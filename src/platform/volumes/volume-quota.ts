/**
 * Quotas across calls: a session's /volume/tmp and an agent's /volume/data each hold at most a fixed number
 * of bytes (every entry counted at the WASI host's fixed entry cost), whatever any one call's budget is.
 *
 * Each call reserves its write budget from every volume it mounts before it runs — the smallest room left
 * among them, at most its own budget — and when it ends, what it wrote is added to each volume's ledger and
 * the reservation is let go, so two calls sharing a volume can never overshoot it together. A guest's writes
 * past the reservation answer EDQUOT. The ledger is pessimistic (it never sees deletes, and a call's writes
 * are charged to every volume it mounted); when a volume looks full, it is measured again, at most once per
 * `remeasureMs`, so space a guest freed comes back.
 *
 * Measuring walks the tree by descriptor (each directory opened relative to the one holding it, O_NOFOLLOW),
 * never following a link, and stops as soon as the volume is known to be over its quota.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import { isSystemError } from '../../common/index.js';
import { ENTRY_COST_BYTES } from '../../wasi/index.js';

const REMEASURE_MS = 5_000;

interface Ledger {
  used: number;
  reserved: number;
  measuredAt: number;
  /** A measurement under way (off the event loop: a walk of a full volume takes a while). */
  measuring: Promise<void> | null;
}

/** What a call holds of its volumes' quotas. */
export interface Reservation {
  /** The write budget the call may use. */
  readonly bytes: number;
  /** The call ended having written `bytes` (its run's count); safe to call once. */
  settle(written: number): void;
}

export interface QuotaVolume {
  dir: string;
  limitBytes: number;
}

export class VolumeQuotas {
  private readonly ledgers = new Map<string, Ledger>();

  constructor(private readonly now: () => number = Date.now, private readonly remeasureMs = REMEASURE_MS) {}

  /** Reserves up to `wanted` bytes from every volume; the grant may be 0 (the volume is full). */
  async reserve(volumes: readonly QuotaVolume[], wanted: number): Promise<Reservation> {
    const ledgers = await Promise.all(volumes.map((volume) => this.ledger(volume)));
    let bytes = Math.max(0, wanted);
    volumes.forEach((volume, i) => {
      bytes = Math.min(bytes, Math.max(0, volume.limitBytes - ledgers[i].used - ledgers[i].reserved));
    });
    for (const ledger of ledgers) ledger.reserved += bytes;
    let settled = false;
    return {
      bytes,
      settle: (written) => {
        if (settled) return;
        settled = true;
        for (const ledger of ledgers) {
          ledger.reserved -= bytes;
          ledger.used += Math.max(0, Math.min(written, bytes));
        }
      },
    };
  }

  /** Forgets a volume (it was deleted). */
  forget(dir: string): void {
    this.ledgers.delete(dir);
  }

  private async ledger(volume: QuotaVolume): Promise<Ledger> {
    let ledger = this.ledgers.get(volume.dir);
    if (!ledger) {
      ledger = { used: 0, reserved: 0, measuredAt: 0, measuring: null };
      this.ledgers.set(volume.dir, ledger);
      await this.measure(volume, ledger);
    } else if (ledger.measuring) {
      await ledger.measuring;
    } else if (ledger.used + ledger.reserved >= volume.limitBytes / 2 && this.now() - ledger.measuredAt >= this.remeasureMs) {
      // Looking full: what the guest deleted since is only seen by measuring again.
      await this.measure(volume, ledger);
    }
    return ledger;
  }

  private measure(volume: QuotaVolume, ledger: Ledger): Promise<void> {
    ledger.measuredAt = this.now();
    const before = ledger.used;
    ledger.measuring = measureVolume(volume.dir, volume.limitBytes).then(
      (used) => {
        // Calls that ended during the walk were counted by it or are added on top: pessimistic, never short.
        ledger.used = Math.max(used, 0) + Math.max(0, ledger.used - before);
      },
      () => undefined, // an unreadable volume keeps its ledger's figure
    ).finally(() => {
      ledger.measuring = null;
    });
    return ledger.measuring;
  }
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Directories deeper than this are not walked: such a volume counts as full (its owner must prune it). */
const MAX_MEASURED_DEPTH = 256;

/**
 * The bytes a volume holds (file sizes, plus ENTRY_COST_BYTES per entry), counted by descriptor, depth first
 * with one open directory per level; stops once past `stopAbove`. A volume that does not exist holds nothing.
 */
export async function measureVolume(root: string, stopAbove = Number.POSITIVE_INFINITY): Promise<number> {
  let rootDir: FileHandle;
  try {
    rootDir = await open(root, DIR_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let total = 0;
  const levels: { dir: FileHandle; names: string[] }[] = [];
  try {
    levels.push({ dir: rootDir, names: [] });
    levels[0].names = await readdir(`/proc/self/fd/${rootDir.fd}`);
    while (levels.length > 0 && total <= stopAbove) {
      const level = levels[levels.length - 1];
      const name = level.names.pop();
      if (name === undefined) {
        levels.pop();
        await level.dir.close();
        continue;
      }
      const path = `/proc/self/fd/${level.dir.fd}/${name}`;
      const stat = await lstat(path).catch((error: unknown) => {
        if (isSystemError(error, 'ENOENT')) return undefined;
        throw error;
      });
      if (!stat) continue; // gone since it was listed
      total += ENTRY_COST_BYTES;
      if (stat.isFile()) total += stat.size;
      if (!stat.isDirectory()) continue;
      if (levels.length >= MAX_MEASURED_DEPTH) return stopAbove + 1;
      const child = await open(path, DIR_FLAGS).catch((error: unknown) => {
        if (isSystemError(error, 'ENOENT', 'ELOOP', 'ENOTDIR')) return undefined;
        throw error;
      });
      // Replaced by a link (O_NOFOLLOW refused it) or removed in between: nothing to count.
      if (!child) continue;
      if ((await child.stat()).ino !== stat.ino) {
        await child.close(); // swapped since the lstat: not walked
        continue;
      }
      levels.push({ dir: child, names: [] });
      levels[levels.length - 1].names = await readdir(`/proc/self/fd/${child.fd}`);
    }
  } finally {
    // Our own read-only directory handles: a failed close loses no data, and must not mask the measure's outcome.
    await Promise.all(levels.map((level) => level.dir.close().catch(() => undefined)));
  }
  return total;
}
