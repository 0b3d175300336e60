/**
 * `/v1/health`: whether this server can do its work, part by part — the store (its database answers), the bus
 * (this replica is connected to NATS) and the fleet (a worker of this replica's protocol is live) — and, when one
 * is missing, `degraded` with a reason per part. Without NATS there is no bus and the fleet is the server itself.
 *
 * The report is pure (healthReport); the store's answer is asked here at most once a second (the endpoint asks
 * no key, so a flood of health checks must not become a flood of queries) and bounded in time.
 */
import { SUBAKO_VERSION } from '../version.js';
import type { RuntimeHealth } from './package-runtime.js';
import type { Store } from './store/index.js';

export interface HealthPart {
  status: 'ok' | 'unavailable' | 'not_used';
  reason?: string;
}

export interface FleetHealth {
  /** `local`: no NATS, calls run in this server's own sandbox. */
  status: 'ok' | 'no_worker' | 'unknown' | 'local';
  workers?: number;
  slots?: number;
  busy?: number;
  reason?: string;
}

export interface HealthReport {
  /** True when every part is (`status` is `ok`): what `{"ok": true}` always meant. */
  ok: boolean;
  status: 'ok' | 'degraded';
  version: string;
  store: HealthPart;
  bus: HealthPart;
  fleet: FleetHealth;
  /** One line per missing part. */
  reasons: string[];
}

/** The report from what was found: `storeProblem` null when the store answered; `runtime` null without NATS. */
export function healthReport(storeProblem: string | null, runtime: RuntimeHealth | null, version = SUBAKO_VERSION): HealthReport {
  const store: HealthPart = storeProblem === null ? { status: 'ok' } : { status: 'unavailable', reason: storeProblem };
  let bus: HealthPart;
  let fleet: FleetHealth;
  if (runtime === null) {
    bus = { status: 'not_used' };
    fleet = { status: 'local' };
  } else {
    const figures = { workers: runtime.fleet.workers, slots: runtime.fleet.slots, busy: runtime.fleet.busy };
    bus = runtime.connected ? { status: 'ok' }
      : { status: 'unavailable', reason: 'this replica is not connected to the NATS server: calls and uploads are refused until it is back (it reconnects by itself)' };
    fleet = !runtime.connected ? { status: 'unknown', ...figures, reason: 'the fleet cannot be heard while the NATS server is away' }
      : runtime.noWorker !== null ? { status: 'no_worker', ...figures, reason: runtime.noWorker }
        : { status: 'ok', ...figures };
  }
  const reasons = [store.reason, bus.reason, fleet.reason].filter((r): r is string => r !== undefined);
  return { ok: reasons.length === 0, status: reasons.length === 0 ? 'ok' : 'degraded', version, store, bus, fleet, reasons };
}

/** How long the store has to answer the health check's query. */
const STORE_ANSWER_MS = 1_000;
/** How long one answer of the store serves the health checks that follow. */
const STORE_ANSWER_KEPT_MS = 1_000;

/** The store's part of the health check: its answer to a trivial query, asked at most once per STORE_ANSWER_KEPT_MS. */
export class StoreHealth {
  private last: { at: number; problem: Promise<string | null> } | null = null;

  constructor(private readonly store: Store) {}

  /** Null when the store answered; else why not, in words that name no internals (the endpoint asks no key). */
  problem(now = Date.now()): Promise<string | null> {
    if (this.last !== null && now - this.last.at < STORE_ANSWER_KEPT_MS) return this.last.problem;
    const problem = this.ask();
    this.last = { at: now, problem };
    return problem;
  }

  private async ask(): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`the database did not answer within ${STORE_ANSWER_MS} ms`), STORE_ANSWER_MS);
    });
    const answered = this.store.ping().then(() => null, () => 'the database cannot be reached (the server reconnects by itself once it is back)');
    try {
      return await Promise.race([answered, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
