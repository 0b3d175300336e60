/**
 * The PackageRuntime of an API replica in scale-out (`subako serve --nats URL`): calls go to workers as NATS
 * messages instead of running in this process (wire protocol: nats-calls.ts). Reading, checking and
 * discovering an uploaded package still happen here, on a small local runtime: discovery runs before a
 * package is stored, and its result is what every replica then serves.
 *
 * Each call is addressed to one worker, chosen from the fleet's presence by the slots this replica's calls leave
 * it (nats-choice.ts): with every slot held, a call waits in line, woken as soon as one of this replica's calls
 * ends (that slot is free), and a new call queues behind those already waiting. A worker that other replicas
 * filled answers `busy`, and one that is gone is answered "no responders" by the server: the call is sent again,
 * under a new id, to another, until its deadline, and ends as a crash `unavailable`. A worker that took a call
 * says so every HEARTBEAT_MS until its outcome; a call whose worker went quiet ends as `interrupted`, and is
 * never sent again (a tool may have had side effects), and that worker gets no call until its presence would
 * have lapsed.
 *
 * The replica knows the live fleet from the workers' presence (nats-fleet.ts): with no worker of its protocol
 * running, a call is not sent at all but ends `unavailable` at once, saying so. It announces its own presence
 * too, so a worker cancels this replica's calls once it is gone (its process, machine or connection ended).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createInbox, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { DEFAULT_CALL_LIMITS, type CallLimits } from '../../config.js';
import { CrashReason, callDeadlineMs, functionTool, type DiscoveryResult, type FunctionCallContext, type FunctionCallOutcome, type ToolInfo } from '../../function/index.js';
import type { ProgressReporter, Tool, Toolbox } from '../../tool.js';
import { SUBAKO_VERSION } from '../../version.js';
import type { FunctionRuntime } from '../function-runtime.js';
import {
  INTERRUPTED_AFTER_MS, MESSAGE_TTL_MS, PROTOCOL, SealedBus, WORKER_KINDS, natsSubjects, notRunOutcome, volumeOnWire, workerSubjects,
  type CallRequest, type NatsSubjects, type WorkerBodies, type WorkerIdentity, type WorkerMessage,
} from './nats-calls.js';
import { WorkerChoice } from './nats-choice.js';
import { fleetSummary, noWorkerReason, readWorkerPresence, type ReplicaPresence, type WorkerPresence } from './nats-fleet.js';
import { PRESENCE_EVERY_MS, PRESENCE_LAPSE_MS, PresenceChannel } from './nats-presence.js';
import { BusDrops, RAW_KINDS, busKey, type BusDropReason } from './nats-envelope.js';
import { BodyAssembly, declaredProblem, partBytes, splitBody, travelsInline } from './nats-body.js';
import { DispatchCounters, type NatsCallResult, type NatsDispatchStats } from './nats-dispatch-stats.js';
import type { DurableCallCourse, InspectedPackage, PackageRuntime, RuntimeHealth, StoredPackageRef } from '../package-runtime.js';
import { NatsOutcomes } from './nats-outcomes.js';

export interface NatsRuntimeOptions {
  /** The runtime owns it: `close` closes it. */
  nc: NatsConnection;
  /** Names the deployment's subjects and bucket (nats-calls.ts). */
  prefix: string;
  /** Where this replica's volumes are; the workers mount the same file system at their `--volumes-dir`. */
  volumesRoot: string;
  /** The deployment's sealing key: the bus key is derived from it and the prefix. */
  sealingKey: Buffer;
  /** Reads, checks and discovers uploads here; its pool runs discovery only. */
  local: FunctionRuntime;
  limits?: Partial<CallLimits>;
  /** Where the rate-limited lines about messages dropped off the bus go. */
  log?: (line: string) => void;
}

/**
 * The longest a call that found every slot held waits before choosing again, unless a slot frees first: a slot
 * another replica's call freed is not seen here.
 */
const MAX_RETRY_PAUSE_MS = 25;
/**
 * How long, once connected (at start, or again after an outage), a call waits for the fleet to announce itself
 * before the replica concludes no worker is running: a worker announces itself every PRESENCE_EVERY_MS, and at
 * once when it hears a replica it did not know.
 */
const SETTLE_MS = PRESENCE_EVERY_MS * 1.5;
/** The most a round trip to the server may take before the fleet's view is read again. */
const ROUND_TRIP_MS = 1_000;

export class NatsRuntime implements PackageRuntime {
  private readonly subjects: NatsSubjects;
  private readonly limits: CallLimits;
  private connected = true;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly counters = new DispatchCounters();
  /** Which worker each call goes to: the slots this replica's calls hold on each (nats-choice.ts). */
  private readonly choice = new WorkerChoice();
  private readonly replies: ReplyRouter;
  private readonly bus: SealedBus;
  /** The outcomes bucket (durable calls' courses), opened when first read. */
  private outcomes: Promise<NatsOutcomes> | null = null;
  /** This replica's id on the bus: the `replica` of its calls, and the id of its presence. */
  readonly busId = `rep_${randomBytes(12).toString('hex')}`;
  /** This replica's presence, and the workers' it hears: the live fleet. */
  private readonly presence: PresenceChannel<ReplicaPresence, WorkerPresence>;
  /** Until when an empty fleet may only mean it has not announced itself yet (just connected). */
  private unsettledUntil = Date.now() + SETTLE_MS;
  /** Calls waiting for the fleet to announce itself, woken when a worker does. */
  private readonly waitingForFleet = new Set<() => void>();
  /**
   * Calls that found every worker's slots held, in the order they did: as a call of this replica's that a worker
   * had taken ends, that worker's slot is free (it frees it before it answers), and the first waiting call is
   * sent at once. Their pause still ends their wait: a slot freed by another replica's call is not seen here.
   */
  private readonly waitingForSlot = new Set<() => void>();

  constructor(private readonly options: NatsRuntimeOptions) {
    this.subjects = natsSubjects(options.prefix);
    this.limits = { ...DEFAULT_CALL_LIMITS, ...options.limits };
    this.bus = new SealedBus(options.nc, busKey(options.sealingKey, options.prefix), new BusDrops(options.log));
    this.replies = new ReplyRouter(this.bus);
    this.presence = new PresenceChannel({
      bus: this.bus,
      announceOn: this.subjects.replicaPresence, announceAs: 'replica_presence', mine: () => ({ v: PROTOCOL, id: this.busId }),
      listenOn: this.subjects.workerPresence, listenFor: 'worker_presence', read: readWorkerPresence,
      onArrival: () => { for (const wake of [...this.waitingForFleet]) wake(); },
    });
    this.presence.start();
    void this.watchConnection();
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.options.nc.status()) {
      if (status.type === 'disconnect') this.connected = false;
      else if (status.type === 'reconnect') {
        this.connected = true;
        // The fleet's presences lapsed while away: they come again within a beat, and at once for this announcement.
        this.unsettledUntil = Date.now() + SETTLE_MS;
        this.presence.announce();
      }
    }
  }

  /** Why no worker could take a call now (none running, none of this replica's protocol); null while one could. */
  private fleetProblem(): string | null {
    return noWorkerReason(this.presence.table.current(Date.now()), this.subjects.workerPresence, SUBAKO_VERSION);
  }

  /**
   * Why no worker could take a call, once the fleet had its chance to say otherwise: just after this replica
   * connected, the first presence is waited for (at most SETTLE_MS); and a view that says none is read again
   * after a round trip to the server, which delivers the presences that arrived but were not read yet.
   */
  private async noWorkerRunning(signal?: AbortSignal): Promise<string | null> {
    if (this.fleetProblem() === null) return null;
    const settling = this.unsettledUntil - Date.now();
    if (settling > 0) await this.fleetArrival(settling, signal);
    if (this.fleetProblem() === null) return null;
    await flushWithin(this.options.nc, ROUND_TRIP_MS);
    return this.fleetProblem();
  }

  /** Resolves when a worker not live until now announces itself, after `ms`, or when `signal` aborts. */
  private fleetArrival(ms: number, signal?: AbortSignal): Promise<void> {
    return wakeOrPause(this.waitingForFleet, ms, signal);
  }

  /** The slots of the live workers of this replica's protocol: what admission sizes the agents' shares from. */
  fleetSlots(): number {
    return fleetSummary(this.presence.table.current(Date.now())).slots;
  }

  /** The bus and the fleet as this replica sees them now, for `/v1/health`. */
  health(): RuntimeHealth {
    const connected = this.connected && !this.options.nc.isClosed();
    return { connected, fleet: fleetSummary(this.presence.table.current(Date.now())), noWorker: connected ? this.fleetProblem() : null };
  }

  /** A durable call's course, as its worker kept it in the outcomes bucket (whichever replica sent the call). */
  async durableCourse(durableKey: string): Promise<DurableCallCourse | null> {
    this.outcomes ??= NatsOutcomes.open(this.options.nc, this.options.prefix, this.options.sealingKey);
    let course;
    try {
      course = await (await this.outcomes).read(durableKey);
    } catch (err) {
      this.outcomes = null;
      throw err;
    }
    if (course === null) return null;
    if (course.state === 'done') return course;
    return { state: 'running', workerLive: this.presence.table.heardAt(course.worker, Date.now()) !== undefined };
  }

  inspect(dir: string): Promise<InspectedPackage> {
    return this.options.local.inspect(dir);
  }

  discover(pkg: StoredPackageRef): Promise<DiscoveryResult> {
    return this.options.local.discover(pkg);
  }

  /** What discovery loaded here goes; the workers are not told (their caches are bounded, see nats-worker.ts). */
  release(digest: string): void {
    this.options.local.release(digest);
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
        const { request, parts } = this.request(pkg, info.name, args, ctx, timeoutMs);
        if (callCtx?.progress) request.progress = true;
        if (callCtx?.traceparent !== undefined) request.traceparent = callCtx.traceparent;
        if (callCtx?.durableKey !== undefined) request.durableKey = callCtx.durableKey;
        const answer = await this.dispatch(request, parts, callCtx?.signal, callCtx?.progress);
        written = answer.writtenBytes;
        // Whatever the worker's outcome says, the record names the worker that took the call, as it said when it did.
        return { ...answer.outcome, worker: answer.worker };
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

  /**
   * The call as it travels, and the pieces of its arguments when they are too large to travel in it: then the
   * call declares them and they go, once, to the worker that takes it (nats-body.ts).
   */
  private request(pkg: StoredPackageRef, tool: string, args: Record<string, unknown>, ctx: FunctionCallContext, timeoutMs: number): { request: Omit<CallRequest, 'replyTo'>; parts: Buffer[] } {
    const json = Buffer.from(JSON.stringify(args), 'utf8');
    const maxPayload = this.bus.maxPayload;
    const split = travelsInline(json.length, maxPayload) ? null : splitBody(json, partBytes(maxPayload));
    return { request: { ...this.claim(pkg, tool, ctx, timeoutMs), ...(split ? { body: split.declared } : { arguments: args }) }, parts: split?.parts ?? [] };
  }

  private claim(pkg: StoredPackageRef, tool: string, ctx: FunctionCallContext, timeoutMs: number): Omit<CallRequest, 'replyTo'> {
    const { volumesRoot } = this.options;
    return {
      v: PROTOCOL,
      callId: randomUUID(),
      replica: this.busId,
      timeoutMs,
      package: { name: pkg.name, version: pkg.version, digest: pkg.digest },
      tool,
      tmp: volumeOnWire(volumesRoot, ctx.tmpDir),
      ...(ctx.dataDir ? { data: volumeOnWire(volumesRoot, ctx.dataDir) } : {}),
      ...(ctx.skillsDir ? { skills: volumeOnWire(volumesRoot, ctx.skillsDir) } : {}),
      // The whole call is sealed: the policy, its CA and the vault credentials travel inside it (the policy as
      // written: the worker compiles its own).
      ...(ctx.egress ? { egress: wireEgress(ctx.egress) } : {}),
      ...(ctx.volumeBudget ? { writeBudgetBytes: ctx.volumeBudget.bytes } : {}),
    };
  }

  /** Sends one call and waits for its outcome; never throws for the bus's sake: a failure is an outcome. */
  private async dispatch(request: Omit<CallRequest, 'replyTo'>, parts: Buffer[], signal?: AbortSignal, progress?: ProgressReporter): Promise<Answer> {
    const started = Date.now();
    const deadline = started + request.timeoutMs;
    const elapsed = (): number => Date.now() - started;
    const notRun = (message: string): Answer => ({ outcome: notRunOutcome(CrashReason.unavailable, message, elapsed()), writtenBytes: 0 });
    const cancelled = (): Answer => ({ outcome: cancelledOutcome(elapsed()), writtenBytes: 0 });
    const { nc } = this.options;
    // The worker that took the call, once one did, as its metrics label (nats-dispatch-stats.ts) and as the record names it.
    let worker: string | null = null;
    let ranOn: WorkerIdentity | undefined;
    /** The worker the call was last sent to (its bus id) while this replica counts one of its slots held by it. */
    let holding: string | null = null;
    /**
     * The slot this call holds is this replica's no more (the next waiting call is woken). `silence`: the worker said
     * nothing of the call for INTERRUPTED_AFTER_MS — its process frozen or gone, or deaf to its subject —, so the
     * next calls go to other workers, not to meet the same silence, until its presence (which a frozen process no
     * longer renews) would have lapsed. Silence while this replica was away from the bus says nothing of the worker.
     */
    const letGo = (silence = false): void => {
      if (holding === null) return;
      if (silence && this.connected) this.choice.silent(holding, Date.now(), PRESENCE_LAPSE_MS);
      else this.choice.ended(holding);
      holding = null;
      this.slotFreed();
    };
    const firstSend = performance.now();
    const end = (result: NatsCallResult, answer: Answer): Answer => {
      this.counters.ended(result, worker, result === 'outcome' ? (performance.now() - firstSend) / 1000 : undefined);
      letGo();
      return ranOn ? { ...answer, worker: ranOn } : answer;
    };
    if (!this.connected || nc.isClosed()) {
      return end('unavailable', notRun('the call could not be sent: the NATS server is not reachable from this API replica; it is retried on the next call once NATS is back'));
    }
    // No worker of this replica's protocol running: nothing could take the call, so it is not sent, and says why.
    const missing = await this.noWorkerRunning(signal);
    if (signal?.aborted) return end('cancelled', cancelled());
    if (missing !== null) return end('unavailable', notRun(missing));
    const { inbox, replies } = this.replies.open(request.callId);
    /** The id the call was last sent under: a new one for each send, so a send answered `busy` can never run. */
    let callId = request.callId;
    /** The control subject of the worker the call was last sent to: where its cancel and its arguments' pieces go. */
    let control: string | null = null;
    const cancel = (): void => {
      if (control !== null && !nc.isClosed()) this.bus.publish(control, 'cancel', { c: callId, ttlMs: MESSAGE_TTL_MS }, {});
    };
    /** Whether the inbox outlives the call here: a cancelled call's worker has yet to say it stopped. */
    let handedOff = false;
    /** The caller went away: the worker is told, the caller answered now, and the slot counted held until the worker frees it. */
    const stop = (): Answer => {
      cancel();
      if (holding !== null) {
        const stopping = this.releaseOnceStopped(replies, holding);
        this.inFlight.add(stopping);
        void stopping.finally(() => this.inFlight.delete(stopping));
        holding = null;
        handedOff = true;
      }
      return end('cancelled', cancelled());
    };
    /**
     * The next message of the worker the call was sent to, or why there is none: nothing for INTERRUPTED_AFTER_MS
     * (its heartbeat's beat, four times over) is a worker gone — but only once a round trip to the server has read
     * all that arrived (this process may have been too busy to read a heartbeat waiting in its socket).
     */
    const read = async (): Promise<WorkerMessage | 'timeout' | 'aborted' | 'no_responders'> => {
      const next = await replies.next(INTERRUPTED_AFTER_MS, signal);
      if (next !== 'timeout' || !this.connected) return next;
      await flushWithin(nc, INTERRUPTED_AFTER_MS);
      return replies.poll() ?? 'timeout';
    };
    try {
      // Calls already wait for a slot: this one waits behind them rather than take the slot freeing next.
      if (this.waitingForSlot.size > 0) await this.slotOrPause(Math.min(MAX_RETRY_PAUSE_MS, Math.max(0, deadline - Date.now())), signal);
      let sends = 0;
      let first: WorkerMessage;
      // Until a worker takes it: one that answers `busy` (other replicas filled it) or is not there is passed over.
      for (;;) {
        if (signal?.aborted) return end('cancelled', cancelled());
        const left = deadline - Date.now();
        if (left <= 0) return end('unavailable', notRun(`no worker was free to take the call within its deadline (${deadline - started} ms); add workers or raise --pool`));
        if (!this.connected) return end('unavailable', notRun('the NATS server went away before a worker took the call'));
        const now = Date.now();
        const chosen = this.choice.choose(this.presence.table.current(now), now);
        if (chosen === null) {
          // Every worker gone while the call waited for a free slot: it ends now, not at its deadline.
          const gone = this.fleetProblem() === null ? null : await this.noWorkerRunning(signal);
          if (gone !== null) return end('unavailable', notRun(gone));
          await this.slotOrPause(this.choice.nextChanceIn(now, Math.min(MAX_RETRY_PAUSE_MS, left)), signal);
          continue;
        }
        if (sends++ > 0) {
          callId = randomUUID();
          replies.expect(callId);
        }
        const subjects = workerSubjects(this.subjects, chosen.bus);
        this.choice.sent(chosen.bus);
        holding = chosen.bus;
        const sent = performance.now();
        this.bus.publish(subjects.call, 'call', { c: callId, ttlMs: left }, { ...request, callId, timeoutMs: left, replyTo: inbox } satisfies CallRequest, inbox);
        const heard = await read();
        if (heard === 'aborted') {
          control = subjects.control;
          return stop();
        }
        if (heard === 'no_responders' || (typeof heard === 'object' && heard.kind === 'busy')) {
          this.counters.noWorkerFree();
          // The send holds no slot there any more; the worker is passed over (ended() would lift a `busy` one).
          if (heard === 'no_responders') this.choice.gone(chosen.bus, Date.now(), PRESENCE_LAPSE_MS);
          else this.choice.busy(chosen.bus, Date.now());
          holding = null;
          continue;
        }
        if (heard === 'timeout' && parts.length > 0) {
          // Arguments in pieces go only to a worker that said `accepted`: this one never did, so the call cannot
          // have run there (and, should it wake, it waits for pieces that never come): another worker takes it.
          this.counters.noWorkerFree();
          letGo(true);
          continue;
        }
        ranOn = { id: chosen.id, host: chosen.host };
        // Metrics name a worker only while the fleet knows it (its presence is live): the label set stays the live fleet.
        worker = chosen.id;
        control = subjects.control;
        if (heard === 'timeout') {
          letGo(true);
          return end('interrupted', {
            outcome: notRunOutcome(CrashReason.interrupted,
              `the worker the call was sent to (${chosen.id}) said nothing of it for ${INTERRUPTED_AFTER_MS / 1000} s (its process, machine or the bus ended); the call is not retried, as it may have run and a tool may have had side effects`,
              elapsed()),
            writtenBytes: 0,
          });
        }
        this.counters.accepted(worker, (performance.now() - sent) / 1000);
        first = heard;
        break;
      }
      /** The pieces of an outcome too large for one message, as they come before the `outcome` that declares them. */
      const outcomeParts = new BodyAssembly();
      const lostOutcome = (why: string): Answer => ({
        outcome: notRunOutcome(CrashReason.interrupted,
          `the call ran on ${ranOn?.id ?? 'a worker'}, but its outcome did not arrive whole over the bus (${why}); the call is not retried, as a tool may have had side effects`,
          elapsed()),
        writtenBytes: 0,
      });
      // Taken: the worker cuts the run to the deadline itself; its heartbeats say it is still there.
      for (let next: Awaited<ReturnType<typeof read>> = first; ; next = await read()) {
        if (next === 'aborted') return stop();
        if (next === 'timeout') {
          letGo(true);
          return end('interrupted', {
            outcome: notRunOutcome(CrashReason.interrupted,
              `the worker running this call (${ranOn.id}) stopped answering mid-call (its process, machine or the bus ended); the call is not retried, as a tool may have had side effects`,
              elapsed()),
            writtenBytes: 0,
          });
        }
        if (next === 'no_responders') continue;
        if (next.kind === 'accepted') {
          // The arguments too large for the call go now, once, to the worker that took it.
          if (parts.length === 0) this.bus.drops.drop('unexpected', inbox);
          else parts.forEach((part, i) => this.bus.publish(control!, 'body', { c: callId, n: i + 1, ttlMs: MESSAGE_TTL_MS }, part));
        }
        if (next.kind === 'progress') progress?.(next.done, next.total, next.message);
        if (next.kind === 'outcome_part') {
          const added = outcomeParts.add(next.bytes);
          if (added.state === 'refused') { cancel(); return end('interrupted', lostOutcome(added.why)); }
        }
        if (next.kind === 'outcome') {
          if (!('body' in next)) return end('outcome', { outcome: next.outcome, writtenBytes: next.writtenBytes });
          const problem = declaredProblem(next.body);
          const whole = problem === null ? outcomeParts.finish(next.body) : { state: 'refused' as const, why: problem };
          if (whole.state === 'refused') return end('interrupted', lostOutcome(whole.why));
          if (whole.state !== 'whole') return end('interrupted', lostOutcome('its pieces did not end'));
          const answer = parseOutcome(whole.body);
          return answer === null ? end('interrupted', lostOutcome('its pieces are not an outcome')) : end('outcome', answer);
        }
        if (next.kind === 'refused') return end('refused', notRun(next.message));
      }
    } finally {
      if (!handedOff) replies.close();
    }
  }

  /**
   * A call cancelled here holds its worker's slot until the worker has stopped it and says so (its outcome, or a
   * refusal), or goes quiet: only then is the slot counted free, so the next call is not sent to meet `busy`.
   */
  private async releaseOnceStopped(replies: ReplyQueue, bus: string): Promise<void> {
    try {
      for (;;) {
        const next = await replies.next(INTERRUPTED_AFTER_MS);
        if (typeof next === 'string' || next.kind === 'outcome' || next.kind === 'refused' || next.kind === 'busy') return;
      }
    } finally {
      replies.close();
      this.choice.ended(bus);
      this.slotFreed();
    }
  }

  /** Resolves when a slot frees (slotFreed, first come first woken), after `ms`, or when `signal` aborts. */
  private slotOrPause(ms: number, signal?: AbortSignal): Promise<void> {
    return wakeOrPause(this.waitingForSlot, ms, signal);
  }

  /** A call a worker had taken ended: that worker has a slot free, for the call that has waited longest. */
  private slotFreed(): void {
    const first = this.waitingForSlot.values().next();
    if (!first.done) first.value();
  }

  /** A read-only snapshot of this replica's calls over the bus, for /metrics. */
  stats(): NatsDispatchStats {
    const now = Date.now();
    return { ...this.counters.snapshot(), busDropped: this.bus.drops.snapshot(), fleet: fleetSummary(this.presence.table.current(now)), passedOver: this.choice.passedOverNow(now) };
  }

  /** The sealed bus this replica's calls travel on (the relayed live stream uses it too). */
  get sealedBus(): SealedBus {
    return this.bus;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    // Only now: while a call of this replica's runs, its worker must go on hearing that the replica is there.
    await this.presence.close();
    await this.options.local.close();
    await this.options.nc.close();
  }
}

/** A call's egress as it travels: everything but the compiled policy, which holds what JSON does not. */
function wireEgress({ compiled: _compiled, ...egress }: NonNullable<FunctionCallContext['egress']>): NonNullable<FunctionCallContext['egress']> {
  return egress;
}

/** What a call over the bus came to: the outcome, what it wrote to the volumes, and the worker that took it (if one did). */
interface Answer {
  outcome: FunctionCallOutcome;
  writtenBytes: number;
  worker?: WorkerIdentity;
}

/** An outcome assembled from its pieces, when it is one. */
function parseOutcome(body: Buffer): { outcome: FunctionCallOutcome; writtenBytes: number } | null {
  try {
    const value = JSON.parse(body.toString('utf8')) as { outcome?: FunctionCallOutcome; writtenBytes?: number };
    if (typeof value?.outcome !== 'object' || value.outcome === null || typeof value.writtenBytes !== 'number') return null;
    return { outcome: value.outcome, writtenBytes: value.writtenBytes };
  } catch {
    return null;
  }
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

/**
 * Resolves when woken (whoever holds `waiters` calls the one added here), after `ms`, or when `signal` aborts —
 * whichever is first; it leaves `waiters` and the signal as it resolves.
 */
function wakeOrPause(waiters: Set<() => void>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const finish = (): void => {
      clearTimeout(timer);
      waiters.delete(finish);
      signal?.removeEventListener('abort', finish);
      done();
    };
    const timer = setTimeout(finish, ms);
    waiters.add(finish);
    signal?.addEventListener('abort', finish, { once: true });
  });
}

function cancelledOutcome(durationMs: number): FunctionCallOutcome {
  return {
    status: 'cancelled', result: null, model: [{ type: 'text', text: 'The call was cancelled: its caller went away.' }], crash: null,
    durationMs, egress: [], stderr: '',
  };
}

/**
 * Every call's replies arrive on one wildcard subscription of this replica's, each call on a subject of its
 * own under it. One subscription for all calls, rather than one per call, because a per-call SUB and UNSUB
 * were two more protocol lines, two more writes and two changes of the server's subscription table on every
 * call (the profile of bench/nats.ts). The client subscribes it again after a reconnect, as any subscription.
 *
 * A reply is taken only when it opens (sealed by a worker of this deployment, for this inbox and this call),
 * and only once, in order: the worker numbers its messages for a call, and one numbered at or below the last
 * taken is a replay. "No responders" is the NATS server's own status message, not sealed: it only makes the
 * call ask another worker. Messages about a call this replica no longer waits for (a late heartbeat) are let go.
 */
class ReplyRouter {
  private readonly prefix = createInbox();
  private readonly queues = new Map<string, ReplyQueue>();
  private next = 0;

  constructor(private readonly bus: SealedBus) {
    bus.nc.subscribe(`${this.prefix}.*`, { callback: (err, msg) => { if (!err) this.route(msg); } });
  }

  private route(msg: Msg): void {
    const queue = this.queues.get(msg.subject);
    if (isNoResponders(msg)) {
      queue?.push('no_responders');
      return;
    }
    const opened = this.bus.open<WorkerBodies[keyof WorkerBodies]>(msg, WORKER_KINDS);
    if (opened === null) return;
    const message = (RAW_KINDS.has(opened.header.k) ? { kind: opened.header.k, bytes: opened.body } : { kind: opened.header.k, ...opened.body }) as WorkerMessage;
    if (queue === undefined) return;
    // Authentic, on this call's inbox, about a send of it before the last (each send has an id of its own): out of place.
    if (queue.callId !== opened.header.c) return this.bus.drops.drop('unexpected', msg.subject);
    const drop = queue.take(message, opened.header.n);
    if (drop !== null) this.bus.drops.drop(drop, msg.subject);
  }

  /** A reply subject for one call and the queue its messages land in; `replies.close()` forgets it. */
  open(callId: string): { inbox: string; replies: ReplyQueue } {
    const inbox = `${this.prefix}.${(this.next++).toString(36)}`;
    const replies = new ReplyQueue(callId, () => this.queues.delete(inbox));
    this.queues.set(inbox, replies);
    return { inbox, replies };
  }
}

type Reply = WorkerMessage | 'no_responders';

/** The messages of one call's inbox, read one at a time with a timeout and the caller's signal. */
class ReplyQueue {
  private readonly queued: Reply[] = [];
  private waiter: ((reply: Reply) => void) | null = null;
  /** The number of the last message taken about the current send. */
  private last = 0;

  constructor(public callId: string, private readonly forget: () => void) {}

  /** The call is sent again under `callId`: only messages about that send count from now on. */
  expect(callId: string): void {
    this.callId = callId;
    this.last = 0;
    this.queued.length = 0;
  }

  /**
   * Takes a worker's message (null) unless it is a replay, numbered at or below the last one taken, or out of
   * place: `busy` and `accepted` are a worker's first word about a send, never a later one.
   */
  take(message: WorkerMessage, n: number): BusDropReason | null {
    if (n <= this.last) return 'replayed';
    if ((message.kind === 'busy' || message.kind === 'accepted') && n !== 1) return 'unexpected';
    this.last = n;
    this.push(message);
    return null;
  }

  push(reply: Reply): void {
    if (this.waiter) {
      const wake = this.waiter;
      this.waiter = null;
      wake(reply);
    } else this.queued.push(reply);
  }

  /** A message that has arrived and not been read, if any. */
  poll(): Reply | undefined {
    return this.queued.shift();
  }

  next(timeoutMs: number, signal?: AbortSignal): Promise<Reply | 'timeout' | 'aborted'> {
    const ready = this.queued.shift();
    if (ready) return Promise.resolve(ready);
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise((done) => {
      const finish = (value: Reply | 'timeout' | 'aborted'): void => {
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
