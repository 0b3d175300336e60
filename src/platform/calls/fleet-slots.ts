/**
 * Admission across replicas (scale-out): a call admitted by its replica's own admission (call-admission.ts) also
 * takes a slot in the store before it runs, so that an agent's and a session's limits hold for the calls of every
 * replica together, not for each replica alone.
 *
 * Why slots in the store, not counters on the bus: the store already is what the replicas agree on, with a
 * clock they share (PostgreSQL's now()) and a lease per process that says which processes are alive. A slot is
 * a row taken under the agent's lock (an advisory lock: two replicas racing for an agent's last slot take
 * turns, and the count and the insert are one decision), and it counts only while the lease of the process that
 * took it holds. A replica that dies mid-call therefore stops holding its slots once its lease lapses, as its
 * calls are marked then; and a slot whose release was lost (the store unreachable at the call's end) lapses at
 * the call's deadline plus a grace. A compare-and-set on a stream would need its own lease bookkeeping for both.
 *
 * A call that finds the agent or the session full waits here, as it would for a local turn: it tries again when
 * a call of this replica ends, and otherwise every POLL_MS (a slot freed by another replica is seen within it),
 * until its deadline — which counts the wait — or until it is stopped or cancelled.
 */
import type { CallSlot, InstanceStore } from '../store/index.js';

/** The longest a waiting call goes without trying again; the first tries come sooner. */
const POLL_MS = 200;
const FIRST_POLL_MS = 20;
/** How long past its deadline a slot whose release was lost still counts. */
const SLOT_GRACE_MS = 30_000;
/** A release that failed (the store out of reach) is tried again this often, until the slot would have lapsed. */
const RELEASE_RETRY_MS = 1_000;

export interface FleetSlotsOptions {
  store: Pick<InstanceStore, 'takeCallSlot' | 'dropCallSlot'>;
  /** This process, as its lease in the store names it. */
  instanceId: string;
  /** The agent's and the session's share now (the admission limits, sized from the fleet). */
  limits: () => { agent: number; session: number };
  /** Where a release that failed is told. */
  report?: (error: Error) => void;
}

export type SlotWait = 'run' | 'timeout' | 'aborted';

export class FleetSlots {
  /** Calls of this replica waiting for a slot: a call of ours that ends wakes them at once. */
  private readonly waiting = new Set<() => void>();

  constructor(private readonly options: FleetSlotsOptions) {}

  /**
   * Waits for a slot for the call: 'run' once it has one (give it back with `release`), 'timeout' when
   * `remainingMs()` ran out first, 'aborted' when `signal` did. Throws when the store cannot be reached.
   */
  async take(slot: Omit<CallSlot, 'instanceId'>, remainingMs: () => number, signal: AbortSignal): Promise<SlotWait> {
    const full: CallSlot = { ...slot, instanceId: this.options.instanceId };
    for (let pause = FIRST_POLL_MS; ; pause = Math.min(POLL_MS, pause * 2)) {
      if (signal.aborted) return 'aborted';
      const left = remainingMs();
      if (left <= 0) return 'timeout';
      if (await this.options.store.takeCallSlot(full, this.options.limits(), left + SLOT_GRACE_MS)) {
        // Aborted while the slot was being taken: give it back at once.
        if (signal.aborted) {
          this.release(slot.callId);
          return 'aborted';
        }
        return 'run';
      }
      await this.pause(Math.min(pause, remainingMs()), signal);
    }
  }

  /** Gives the call's slot back, and lets this replica's waiting calls try again. Never throws. */
  release(callId: string): void {
    const drop = (triesLeft: number): void => {
      this.options.store.dropCallSlot(callId).then(() => this.wake(), (err: unknown) => {
        if (triesLeft > 0) setTimeout(() => drop(triesLeft - 1), RELEASE_RETRY_MS).unref();
        else this.options.report?.(new Error(`could not give back the fleet slot of call ${callId}; it lapses by itself: ${(err as Error).message}`));
      });
    };
    drop(Math.ceil(SLOT_GRACE_MS / RELEASE_RETRY_MS));
  }

  private wake(): void {
    for (const resume of [...this.waiting]) resume();
  }

  private pause(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener('abort', done, { once: true });
      this.waiting.add(done);
    });
  }
}
