/**
 * The PackageRuntime of an API replica in scale-out (`subako serve --nats URL`): calls go to workers as NATS
 * messages instead of running in this process (wire protocol: nats-calls.ts). Reading, checking and
 * discovering an uploaded package still happen here, on a small local runtime: discovery runs before a
 * package is stored, and its result is what every replica then serves.
 *
 * Flow control is the workers': each holds one queue subscription per free slot, each for one message, so
 * the NATS server itself never hands a worker more than it has room for. A call nobody takes is answered
 * by the server at once ("no responders"); the call tries again, with a short pause, until its deadline, and
 * ends as a crash `unavailable`. Once a worker took a call, it says so every HEARTBEAT_MS; a call whose worker
 * went quiet ends as `interrupted`, and is never sent again (a tool may have had side effects).
 */
import { randomUUID } from 'node:crypto';
import { createInbox, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { DEFAULT_CALL_LIMITS, type CallLimits } from '../config.js';
import { CrashReason, callDeadlineMs, functionTool, type DiscoveryResult, type FunctionCallContext, type FunctionCallOutcome, type ToolInfo } from '../function/index.js';
import type { ProgressReporter, Tool, Toolbox } from '../tool.js';
import type { FunctionRuntime } from './function-runtime.js';
import {
  INTERRUPTED_AFTER_MS, decodeMessage, encodeMessage, natsSubjects, notRunOutcome, sealCredentials, volumeOnWire,
  type CallRequest, type NatsSubjects, type WorkerMessage,
} from './nats-calls.js';
import { DispatchCounters, type NatsCallResult, type NatsDispatchStats } from './nats-dispatch-stats.js';
import type { InspectedPackage, PackageRuntime, StoredPackageRef } from './package-runtime.js';

export interface NatsRuntimeOptions {
  /** The runtime owns it: `close` closes it. */
  nc: NatsConnection;
  /** Names the deployment's subjects and bucket (nats-calls.ts). */
  prefix: string;
  /** Where this replica's volumes are; the workers mount the same file system at their `--volumes-dir`. */
  volumesRoot: string;
  sealingKey: Buffer;
  /** Reads, checks and discovers uploads here; its pool runs discovery only. */
  local: FunctionRuntime;
  limits?: Partial<CallLimits>;
}

/**
 * How long a call waits before asking again when no worker had a free slot: from 1 ms, doubling to 25 ms, so
 * a slot that frees at once is taken at once and a long wait does not flood the bus.
 */
const FIRST_RETRY_PAUSE_MS = 1;
const MAX_RETRY_PAUSE_MS = 25;
/** How often a call waiting for its first answer looks whether the connection is still up. */
const CONNECTION_CHECK_MS = 100;

export class NatsRuntime implements PackageRuntime {
  private readonly subjects: NatsSubjects;
  private readonly limits: CallLimits;
  private connected = true;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly counters = new DispatchCounters();
  private readonly replies: ReplyRouter;

  constructor(private readonly options: NatsRuntimeOptions) {
    this.subjects = natsSubjects(options.prefix);
    this.limits = { ...DEFAULT_CALL_LIMITS, ...options.limits };
    this.replies = new ReplyRouter(options.nc);
    void this.watchConnection();
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.options.nc.status()) {
      if (status.type === 'disconnect') this.connected = false;
      else if (status.type === 'reconnect') this.connected = true;
    }
  }

  inspect(dir: string): Promise<InspectedPackage> {
    return this.options.local.inspect(dir);
  }

  discover(pkg: StoredPackageRef): Promise<DiscoveryResult> {
    return this.options.local.discover(pkg);
  }

  async toolbox(pkg: StoredPackageRef, tools: ToolInfo[], context: () => FunctionCallContext | Promise<FunctionCallContext>): Promise<Toolbox> {
    const box: Toolbox = {};
    for (const info of tools) box[info.name] = this.tool(pkg, info, context);
    return box;
  }

  private tool(pkg: StoredPackageRef, info: ToolInfo, context: () => FunctionCallContext | Promise<FunctionCallContext>): Tool {
    return functionTool(pkg, info, async (args, callCtx) => {
      const ctx = await context();
      let written = 0;
      const running = (async () => {
        const timeoutMs = callDeadlineMs(ctx.limits?.callTimeoutMs ?? this.limits.callTimeoutMs, callCtx?.timeoutMs);
        const request = this.request(pkg, info.name, args, ctx, timeoutMs);
        if (callCtx?.progress) request.progress = true;
        const answer = await this.dispatch(request, callCtx?.signal, callCtx?.progress);
        written = answer.writtenBytes;
        return answer.outcome;
      })();
      this.inFlight.add(running);
      try {
        return await running;
      } finally {
        this.inFlight.delete(running);
        ctx.volumeBudget?.settle(written);
      }
    });
  }

  private request(pkg: StoredPackageRef, tool: string, args: Record<string, unknown>, ctx: FunctionCallContext, timeoutMs: number): CallRequest {
    const callId = randomUUID();
    const { volumesRoot, sealingKey } = this.options;
    return {
      v: 1,
      callId,
      timeoutMs,
      package: { name: pkg.name, version: pkg.version, digest: pkg.digest },
      tool,
      arguments: args,
      tmp: volumeOnWire(volumesRoot, ctx.tmpDir),
      ...(ctx.dataDir ? { data: volumeOnWire(volumesRoot, ctx.dataDir) } : {}),
      ...(ctx.skillsDir ? { skills: volumeOnWire(volumesRoot, ctx.skillsDir) } : {}),
      ...(ctx.egress ? {
        egress: {
          allow: ctx.egress.allow, grants: ctx.egress.grants, privateDestinations: ctx.egress.privateDestinations,
          ...(ctx.egress.ca !== undefined ? { ca: ctx.egress.ca } : {}),
          sealedCredentials: sealCredentials(ctx.egress.credentials, callId, sealingKey),
        },
      } : {}),
      limits: { ...ctx.limits, callTimeoutMs: timeoutMs },
      ...(ctx.volumeBudget ? { writeBudgetBytes: ctx.volumeBudget.bytes } : {}),
    };
  }

  /** Sends one call and waits for its outcome; never throws for the bus's sake: a failure is an outcome. */
  private async dispatch(request: CallRequest, signal?: AbortSignal, progress?: ProgressReporter): Promise<Answer> {
    const started = Date.now();
    const deadline = started + request.timeoutMs;
    const elapsed = (): number => Date.now() - started;
    const notRun = (message: string): Answer => ({ outcome: notRunOutcome(CrashReason.unavailable, message, elapsed()), writtenBytes: 0 });
    const cancelled = (): Answer => ({ outcome: cancelledOutcome(elapsed()), writtenBytes: 0 });
    const { nc } = this.options;
    // The worker that took the call, once one did, and how it ended: for /metrics (nats-dispatch-stats.ts).
    let worker: string | null = null;
    const firstSend = performance.now();
    const end = (result: NatsCallResult, answer: Answer): Answer => {
      this.counters.ended(result, worker, result === 'outcome' ? (performance.now() - firstSend) / 1000 : undefined);
      return answer;
    };
    if (!this.connected || nc.isClosed()) {
      return end('unavailable', notRun('the call could not be sent: the NATS server is not reachable from this API replica; it is retried on the next call once NATS is back'));
    }
    const { inbox, replies } = this.replies.open();
    const cancel = (): void => {
      if (!nc.isClosed()) nc.publish(this.subjects.cancel, encodeMessage({ callId: request.callId }));
    };
    try {
      // Until a worker takes it: a "no responders" answer means every worker's slots are taken; ask again.
      let taken = false;
      let retryPause = FIRST_RETRY_PAUSE_MS;
      while (!taken) {
        if (signal?.aborted) return end('cancelled', cancelled());
        const left = deadline - Date.now();
        if (left <= 0) return end('unavailable', notRun(`no worker was free to take the call within its deadline (${deadline - started} ms); add workers or raise --pool`));
        if (!this.connected) return end('unavailable', notRun('the NATS server went away before a worker took the call'));
        const sent = performance.now();
        nc.publish(this.subjects.calls, encodeMessage({ ...request, timeoutMs: left }), { reply: inbox });
        // A connected server answers at once (a worker's "accepted", or "no responders"); silence means the
        // connection is going, which its status says within moments: look at it while waiting.
        let first: Msg | 'timeout' | 'aborted' = 'timeout';
        for (let waited = 0; waited < left; waited += CONNECTION_CHECK_MS) {
          first = await replies.next(Math.min(CONNECTION_CHECK_MS, left - waited), signal);
          if (first !== 'timeout' || !this.connected) break;
        }
        if (first === 'aborted') { cancel(); return end('cancelled', cancelled()); }
        if (first === 'timeout' && !this.connected) return end('unavailable', notRun('the NATS server went away before a worker took the call; it is retried on the next call once NATS is back'));
        if (first === 'timeout') return end('unavailable', notRun(`no worker took the call within its deadline (${deadline - started} ms)`));
        if (isNoResponders(first)) {
          this.counters.noWorkerFree();
          await pause(Math.min(retryPause, Math.max(0, deadline - Date.now())), signal);
          retryPause = Math.min(MAX_RETRY_PAUSE_MS, retryPause * 2);
          continue;
        }
        const message = decodeMessage<WorkerMessage>(first.data);
        if (message.kind === 'refused') return end('refused', notRun(message.message));
        if (message.kind === 'outcome') return end('outcome', { outcome: message.outcome, writtenBytes: message.writtenBytes });
        taken = true;
        if (message.kind === 'accepted') {
          worker = message.worker;
          this.counters.accepted(worker, (performance.now() - sent) / 1000);
        }
      }
      // Taken: the worker cuts the run to the deadline itself; its heartbeats say it is still there.
      for (;;) {
        let next = await replies.next(INTERRUPTED_AFTER_MS, signal);
        if (next === 'aborted') { cancel(); return end('cancelled', cancelled()); }
        // Quiet for long, or this process was too busy to read: a round trip to the server reads all that has
        // arrived before it is answered, so a heartbeat that was only waiting to be read is not taken for death.
        if (next === 'timeout' && this.connected) {
          await flushWithin(nc, INTERRUPTED_AFTER_MS);
          next = replies.poll() ?? 'timeout';
        }
        if (next === 'timeout') {
          return end('interrupted', {
            outcome: notRunOutcome(CrashReason.interrupted,
              `the worker running this call (${worker ?? 'a worker'}) stopped answering mid-call (its process, machine or the bus ended); the call is not retried, as a tool may have had side effects`,
              elapsed()),
            writtenBytes: 0,
          });
        }
        if (isNoResponders(next)) continue;
        const message = decodeMessage<WorkerMessage>(next.data);
        if (message.kind === 'progress') progress?.(message.done, message.total, message.message);
        if (message.kind === 'outcome') return end('outcome', { outcome: message.outcome, writtenBytes: message.writtenBytes });
        if (message.kind === 'refused') return end('refused', notRun(message.message));
      }
    } finally {
      replies.close();
    }
  }

  /** A read-only snapshot of this replica's calls over the bus, for /metrics. */
  stats(): NatsDispatchStats {
    return this.counters.snapshot();
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    await this.options.local.close();
    await this.options.nc.close();
  }
}

/** What a call over the bus came to: the outcome, and what it wrote to the volumes. */
interface Answer {
  outcome: FunctionCallOutcome;
  writtenBytes: number;
}

/** A round trip to the server, given up after `ms` (a connection going away may never answer). */
async function flushWithin(nc: NatsConnection, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    nc.flush().catch(() => undefined),
    new Promise<void>((done) => { timer = setTimeout(done, ms); }),
  ]);
  clearTimeout(timer);
}

function isNoResponders(msg: Msg): boolean {
  return msg.headers?.code === 503;
}

function cancelledOutcome(durationMs: number): FunctionCallOutcome {
  return {
    status: 'cancelled', result: null, model: [{ type: 'text', text: 'The call was cancelled: its caller went away.' }], crash: null,
    durationMs, egress: [], stderr: '',
  };
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      done();
    }
    signal?.addEventListener('abort', finish, { once: true });
  });
}

/**
 * Every call's replies arrive on one wildcard subscription of this replica's, each call on a subject of its
 * own under it. One subscription for all calls, rather than one per call, because a per-call SUB and UNSUB
 * were two more protocol lines, two more writes and two changes of the server's subscription table on every
 * call (the profile of bench/nats.ts). The client subscribes it again after a reconnect, as any subscription.
 */
class ReplyRouter {
  private readonly prefix = createInbox();
  private readonly queues = new Map<string, ReplyQueue>();
  private next = 0;

  constructor(nc: NatsConnection) {
    nc.subscribe(`${this.prefix}.*`, {
      // A reply for a call that has ended (a late heartbeat) finds no queue and is dropped.
      callback: (err, msg) => { if (!err) this.queues.get(msg.subject)?.push(msg); },
    });
  }

  /** A reply subject for one call and the queue its messages land in; `replies.close()` forgets it. */
  open(): { inbox: string; replies: ReplyQueue } {
    const inbox = `${this.prefix}.${(this.next++).toString(36)}`;
    const replies = new ReplyQueue(() => this.queues.delete(inbox));
    this.queues.set(inbox, replies);
    return { inbox, replies };
  }
}

/** The messages of one call's inbox, read one at a time with a timeout and the caller's signal. */
class ReplyQueue {
  private readonly queued: Msg[] = [];
  private waiter: ((msg: Msg) => void) | null = null;

  constructor(private readonly forget: () => void) {}

  push(msg: Msg): void {
    if (this.waiter) {
      const wake = this.waiter;
      this.waiter = null;
      wake(msg);
    } else this.queued.push(msg);
  }

  /** A message that has arrived and not been read, if any. */
  poll(): Msg | undefined {
    return this.queued.shift();
  }

  next(timeoutMs: number, signal?: AbortSignal): Promise<Msg | 'timeout' | 'aborted'> {
    const ready = this.queued.shift();
    if (ready) return Promise.resolve(ready);
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise((done) => {
      const finish = (value: Msg | 'timeout' | 'aborted'): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiter = null;
        done(value);
      };
      const onAbort = (): void => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), Math.max(1, timeoutMs));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiter = finish;
    });
  }

  close(): void {
    this.forget();
  }
}
