/**
 * Creating a directory entry costs the host an inode and directory space whatever the entry holds, so a
 * budget of bytes alone let one call make 200,000 empty directories. Every directory, file and link a run
 * creates is charged a fixed cost from its write budget, and a run creates at most a fixed number of them;
 * past either, the creating call answers EDQUOT (as a full quota on a real file system would).
 */
import { Errno, fail } from './errno.js';
import type { WriteBudget } from './types.js';

/** What one new entry costs from the write budget: one block, about what the file system spends on it. */
export const ENTRY_COST_BYTES = 4096;

/** Entries one run may create, whatever its budget: enough to unpack a large source tree. */
export const MAX_ENTRIES_PER_RUN = 65_536;

export class EntryBudget {
  private created = 0;

  constructor(private readonly cap = MAX_ENTRIES_PER_RUN) {}

  /** Entries charged so far in this run. */
  get count(): number {
    return this.created;
  }

  reset(): void {
    this.created = 0;
  }

  /** Charges one new entry before it is made; fails EDQUOT (nothing charged) past the cap or the bytes left. */
  charge(budget: WriteBudget): void {
    if (this.created >= this.cap || !budget.tryConsume(ENTRY_COST_BYTES)) fail(Errno.DQUOT);
    this.created += 1;
  }
}
