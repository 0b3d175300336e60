/**
 * A worker node (`subako worker --nats URL`): takes the calls replicas address to it, runs each in its sandbox
 * pool (the same FunctionHost as `subako serve`), performs the call's egress, and answers (wire protocol:
 * nats-calls.ts).
 *
 * Flow control: a replica sends a worker only the calls its slots can take, as far as that replica knows
 * (nats-choice.ts); a call heard with every slot taken (other replicas filled them) is answered `busy`, and the
 * replica chooses again. One subscription for the worker's whole life, on its own subjects: a call and its
 * cancel or body cost no SUB or UNSUB, no change of the server's subscription table. A call is never queued
 * without bound: nothing waits on the bus, the replica holds it. Once this worker is gone, the server answers
 * "no responders" to a call sent to it. Chosen over JetStream pull consumers with max ack pending because a call
 * is a request that someone waits for: it must not outlive its deadline in a stream, nor be redelivered after a
 * worker died mid-call (calls are never retried), and core NATS adds no storage round trip to each call.
 *
 * Package bundles come from the object store by digest (verified on read) and are unpacked into this
 * worker's data directory once; loaded packages are kept by digest (loaded-packages.ts). A deleted package
 * version is not announced on the bus: the worker keeps at most `maxLoadedPackages`, the least recently
 * called leaving first, and the FunctionHost releases the modules no package holds after a while.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { FunctionHost, type FunctionCallContext, type FunctionCallOutcome, type FunctionHostStats, type LoadedPackage } from '../../function/index.js';
import { ContentStore, type BlobStore, type BundleLimits } from '../../package/index.js';
import { DEFAULT_CALL_LIMITS, type CallLimits } from '../../config.js';
import {
  BODY_PIECE_WAIT_MS, HEARTBEAT_MS, MESSAGE_TTL_MS, PROTOCOL, REPLICA_ID, SealedBus, WORKER_HOST, natsSubjects, volumeFromWire, workerCallLimits, workerSubjects,
  type CallRequest, type NatsSubjects, type WorkerBodies, type WorkerKind,
} from './nats-calls.js';
import { BusDrops, EncodedJson, ReplayGuard, busKey, type BusDropReason } from './nats-envelope.js';
import { NatsOutcomes, isDurableKey, type DurableCourse } from './nats-outcomes.js';
import { BodyAssembly, declaredProblem, partBytes, splitBody, travelsInline, type DeclaredBody } from './nats-body.js';
import { readReplicaPresence, type ReplicaPresence, type WorkerPresence } from './nats-fleet.js';
import { PRESENCE_EVERY_MS, REPLICA_LAPSE_MS, PresenceChannel } from './nats-presence.js';
import { SUBAKO_VERSION } from '../../version.js';
import { LoadedPackages, type PackageKey } from '../loaded-packages.js';
import { parseTraceparent } from '../../mcp/index.js';

export interface NatsWorkerOptions {
  nc: NatsConnection;
  prefix: string;
  /** The package bundles' object store (the same bucket the API replicas store into). */
  blobs: BlobStore;
  /** Slots: calls run at once. */
  pool: number;
  volumesDir: string;
  /** This worker's own directory: unpacked packages, the instrumented-module cache. */
  dataDir: string;
  /** The deployment's sealing key (SUBAKO_SECRET_KEY): the bus key is derived from it and the prefix. */
  sealingKey: Buffer;
  /** This worker's own limits: a call's deadline is cut to them, and nothing else of them comes from a call. */
  limits?: Partial<CallLimits>;
  bundleLimits?: BundleLimits;
  /** Package versions kept loaded (DEFAULT_MAX_PACKAGES by default): past it, the least recently called leaves. */
  maxLoadedPackages?: number;
  /** Names this worker in answers and logs; default host name and pid. */
  name?: string;
  log?: (line: string) => void;
}

/** What a worker's `/metrics` reads (server/'s WorkerMetrics): its slots, its calls, its sandbox, the bus. */
export interface NatsWorkerStats {
  slots: number;
  /** Calls taken and not answered yet. */
  inFlight: number;
  /** Calls answered, by the outcome's status (ok, tool_error, crash, cancelled) or `refused` (not run). */
  calls: Readonly<Record<string, number>>;
  /** Messages dropped off the bus, by why: they were never acted on. */
  busDropped: Readonly<Record<BusDropReason, number>>;
  /** Package versions loaded now (at most `maxLoadedPackages`). */
  loadedPackages: number;
  sandbox: FunctionHostStats;
}

/** A call this worker took, as the replica's later word (its arguments' pieces, a cancel) finds it. */
interface CallInbox {
  callId: string;
  /** The replica that sent the call (its bus id): the call is cancelled once its presence lapses. */
  replica: string;
  cancel: AbortController;
  /** The call's arguments, when they follow `accepted` in pieces (nats-body.ts); null when they came in the call. */
  body: BodyInbox | null;
  /** A durable call (a task's): run on when its replica goes quiet, its course kept in the outcomes bucket. */
  durable: boolean;
  /** A durable call whose replica went quiet (said once). */
  orphaned?: boolean;
}

/** A call's arguments as their pieces arrive on its inbox, numbered from 1, until whole or refused. */
class BodyInbox {
  private readonly assembly: BodyAssembly;
  private next = 1;
  private timer: NodeJS.Timeout | undefined;
  private settle!: (result: Buffer | Error) => void;
  readonly result = new Promise<Buffer | Error>((resolve) => { this.settle = resolve; });
  settled = false;

  constructor(readonly declared: DeclaredBody) {
    this.assembly = new BodyAssembly(declared);
  }

  /** Starts counting the wait for the next piece (from `accepted` on); each piece counts it again. */
  wait(): void {
    clearTimeout(this.timer);
    if (this.settled) return;
    this.timer = setTimeout(() => this.end(new Error(
      `its arguments did not arrive whole (${this.assembly.receivedBytes} of ${this.declared.bytes} bytes, nothing more for ${BODY_PIECE_WAIT_MS / 1000} s)`)), BODY_PIECE_WAIT_MS);
  }

  /** A piece numbered `n`: a replay (dropped), out of order (refused: the bus delivers one sender's messages in order) or the next one. */
  piece(n: number, bytes: Uint8Array): BusDropReason | null {
    if (this.settled) return 'unexpected';
    if (n < this.next) return 'replayed';
    if (n > this.next) {
      this.end(new Error(`its arguments arrived out of order (piece ${n} where ${this.next} was due)`));
      return 'unexpected';
    }
    this.next += 1;
    const added = this.assembly.add(bytes);
    if (added.state === 'refused') this.end(new Error(`its arguments were refused: ${added.why}`));
    else if (added.state === 'whole') this.end(added.body);
    else this.wait();
    return null;
  }

  end(result: Buffer | Error): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.settle(result);
  }
}

/** A NATS subject a reply may go to: tokens of printable characters, no wildcard. */
const REPLY_SUBJECT = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

export class NatsWorker {
  readonly name: string;
  /** The machine this worker runs on, as call records name it. */
  readonly hostName: string;
  private readonly subjects: NatsSubjects;
  private readonly host: FunctionHost;
  private readonly limits: CallLimits;
  private readonly packages: ContentStore;
  private readonly bus: SealedBus;
  /**
   * Call ids heard, each until its call could no longer be taken anyway: a call sent again is dropped. An id
   * answered `busy` is remembered too: the replica asks again under a new one, so the old one never runs.
   */
  private readonly taken = new ReplayGuard();
  /** This worker's id on the bus, new with each process: its subjects' token, in its presence. */
  readonly busId = `wkr_${randomBytes(12).toString('hex')}`;
  private readonly own: ReturnType<typeof workerSubjects>;
  /** The calls taken and not ended, by call id: what a piece of arguments or a cancel on the control subject is for. */
  private readonly inboxes = new Map<string, CallInbox>();
  private readonly loaded: LoadedPackages;
  /** The one subscription, on this worker's own subjects: its calls, and their cancels and bodies. */
  private subscription: Subscription | null = null;
  private readonly calls = new Set<Promise<void>>();
  private closing = false;
  /** Calls this worker answered, for its log line and its tests. */
  answered = 0;
  private readonly answers: Record<string, number> = {};
  /** Calls taken whose slot is not free again yet (a call's bookkeeping may outlast its answer by a moment). */
  private inFlight = 0;
  /** This worker's presence (its slots and version, for the replicas' view of the fleet), and the replicas'. */
  private readonly presence: PresenceChannel<WorkerPresence, ReplicaPresence>;
  /** Looks every PRESENCE_EVERY_MS for calls whose replica went quiet. */
  private replicaWatch: NodeJS.Timeout | null = null;
  /** The outcomes bucket, opened with the first durable call. */
  private outcomes: Promise<NatsOutcomes> | null = null;

  constructor(private readonly options: NatsWorkerOptions) {
    const host = hostname();
    this.hostName = WORKER_HOST.test(host) ? host : 'unknown';
    this.name = options.name ?? `${this.hostName}:${process.pid}`;
    this.subjects = natsSubjects(options.prefix);
    this.own = workerSubjects(this.subjects, this.busId);
    this.limits = { ...DEFAULT_CALL_LIMITS, ...options.limits };
    this.host = new FunctionHost({ poolSize: options.pool, limits: options.limits, preparedCacheDir: join(options.dataDir, 'cache', 'prepared') });
    this.packages = new ContentStore(join(options.dataDir, 'packages'), options.bundleLimits, options.blobs);
    this.loaded = new LoadedPackages(this.host, (key) => this.packages.tree(key.digest), { maxPackages: options.maxLoadedPackages });
    this.bus = new SealedBus(options.nc, busKey(options.sealingKey, options.prefix), new BusDrops(options.log));
    this.presence = new PresenceChannel({
      bus: this.bus,
      announceOn: this.subjects.workerPresence, announceAs: 'worker_presence',
      mine: () => ({ v: PROTOCOL, id: this.name, bus: this.busId, host: this.hostName, version: SUBAKO_VERSION, slots: options.pool, busy: this.inFlight }),
      listenOn: this.subjects.replicaPresence, listenFor: 'replica_presence', read: readReplicaPresence, lapseMs: REPLICA_LAPSE_MS,
      // A replica just started (or back after an outage) learns of this worker at once, not a beat later.
      onArrival: () => this.presence.announce(),
    });
  }

  async start(): Promise<void> {
    await this.packages.init();
    this.subscription = this.options.nc.subscribe(this.own.all, {
      callback: (err, msg) => {
        if (err) return;
        if (msg.subject === this.own.call) this.onCall(msg);
        else this.onControl(msg);
      },
    });
    // Subscribed before announced: a replica that hears of this worker finds it listening.
    await this.options.nc.flush();
    this.presence.start();
    this.replicaWatch = setInterval(() => void this.cancelCallsOfGoneReplicas(), PRESENCE_EVERY_MS);
    this.replicaWatch.unref();
    void this.watchConnection();
    // The subscriptions and the first presence reach the server before the worker says it is ready.
    await this.options.nc.flush();
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.options.nc.status()) {
      if (status.type === 'reconnect') this.presence.announce();
    }
  }

  /**
   * Cancels the calls whose replica has not been heard for REPLICA_LAPSE_MS: its process, machine or connection
   * is gone, nobody waits for the answer, and the slot is better given to a call someone waits for. What arrived
   * but was not read yet is read first (a round trip to the server), so a replica's presence that was only
   * waiting in this worker's socket does not make it look gone.
   */
  private async cancelCallsOfGoneReplicas(): Promise<void> {
    const quiet = (): [string, CallInbox][] => [...this.inboxes].filter(([, call]) => !call.cancel.signal.aborted && !call.orphaned && this.presence.table.heardAt(call.replica, Date.now()) === undefined);
    if (quiet().length === 0 || this.options.nc.isClosed()) return;
    await this.options.nc.flush().catch(() => undefined);
    for (const [, call] of quiet()) {
      if (call.durable) {
        // A durable call runs on: its task, in the store, is read through any replica, which finds its outcome in the bucket.
        call.orphaned = true;
        this.options.log?.(`the replica ${call.replica} of durable call ${call.callId} has not been heard for ${REPLICA_LAPSE_MS / 1000} s (gone); the call runs on, its outcome kept for its task`);
        continue;
      }
      call.cancel.abort();
      this.options.log?.(`cancelled call ${call.callId} of the replica ${call.replica}: it has not been heard for ${REPLICA_LAPSE_MS / 1000} s (gone), so nobody waits for the answer; its slot is free again`);
    }
  }

  /** A `cancel` or a piece of arguments from the replica, for a call this worker took (anything else is dropped). */
  private onControl(msg: Msg): void {
    const opened = this.bus.open<Record<string, never> | Uint8Array>(msg, ['cancel', 'body']);
    if (opened === null) return;
    const call = this.inboxes.get(opened.header.c);
    // Authentic, for a call this worker does not run (ended, or never taken here): out of place.
    if (call === undefined) return this.bus.drops.drop('unexpected', msg.subject);
    if (opened.header.k === 'body') {
      const drop = call.body === null ? 'unexpected' : call.body.piece(opened.header.n, opened.body as Uint8Array);
      if (drop !== null) this.bus.drops.drop(drop, msg.subject);
      return;
    }
    call.cancel.abort();
  }

  /**
   * A call addressed to this worker: opened (a message that does not open, or a call id heard before, is dropped
   * unanswered), then taken while a slot is free; with every slot taken, or while this worker leaves, answered
   * `busy`, and the replica asks another.
   */
  private onCall(msg: Msg): void {
    const opened = this.bus.open<CallRequest>(msg, ['call']);
    if (opened === null) return;
    const request = opened.body;
    if (request?.callId !== opened.header.c || typeof request.replyTo !== 'string' || !REPLY_SUBJECT.test(request.replyTo)) {
      return this.bus.drops.drop('malformed', msg.subject);
    }
    if (!this.taken.firstTime(request.callId, opened.header.e)) return this.bus.drops.drop('replayed', msg.subject);
    if (this.closing || this.inFlight >= this.options.pool) {
      this.bus.publish(request.replyTo, 'busy', { c: request.callId, n: 1, ttlMs: MESSAGE_TTL_MS }, {});
      return;
    }
    // The slot is free again once, as soon as the call no longer needs it: before its last answer goes out
    // (take's `free`), or when take ends, whichever is first.
    let freed = false;
    this.inFlight += 1;
    const free = (): void => {
      if (freed) return;
      freed = true;
      this.inFlight -= 1;
    };
    const call = this.take(request, free).finally(() => {
      this.calls.delete(call);
      free();
    });
    this.calls.add(call);
  }

  /**
   * Runs one call taken and answers: its heartbeat from the start (the replica hears nothing else until the
   * outcome), `accepted` first when its arguments follow in pieces. `free` gives its slot back: called just before
   * the outcome (or a refusal after the run) is published, so the replica, which counts the slot held until it
   * hears the answer, never sends a call the slot cannot take yet.
   */
  private async take(request: CallRequest, free: () => void): Promise<void> {
    let sequence = 0;
    const reply = <K extends WorkerKind>(kind: K, body: WorkerBodies[K] | EncodedJson): void => {
      if (this.options.nc.isClosed()) return;
      this.bus.publish(request.replyTo, kind, { c: request.callId, n: (sequence += 1), ttlMs: MESSAGE_TTL_MS }, body);
    };
    const problem = requestProblem(request);
    if (problem !== null) {
      reply('refused', { message: `the worker ${this.name} could not read the call (${problem}); run the same subako version on replicas and workers` });
      this.count('refused');
      return;
    }
    const deadline = Date.now() + request.timeoutMs;
    const inbox: CallInbox = {
      callId: request.callId, replica: request.replica, cancel: new AbortController(), body: request.body ? new BodyInbox(request.body) : null,
      durable: request.durableKey !== undefined,
    };
    // The call itself shows its replica alive now (it may not have announced itself to this worker yet).
    this.presence.table.touch({ v: PROTOCOL, id: request.replica }, Date.now());
    this.inboxes.set(request.callId, inbox);
    // From now on the replica hears this worker at least every HEARTBEAT_MS, or takes it for gone.
    const heartbeat = setInterval(() => reply('alive', {}), HEARTBEAT_MS);
    let borrowing: ReturnType<LoadedPackages['borrow']> | undefined;
    try {
      // The package is made ready while the arguments' pieces (if any) come.
      borrowing = this.loaded.borrow(packageKey(request.package));
      borrowing.catch(() => undefined);
      if (inbox.body !== null) {
        reply('accepted', {});
        inbox.body.wait();
      }
      if (request.durableKey !== undefined) await this.keepCourse(request.durableKey, { state: 'running', worker: this.name });
      const args = inbox.body ? await this.receiveBody(inbox.body, inbox.cancel.signal) : request.arguments!;
      const { loaded } = await borrowing;
      const { outcome, writtenBytes } = await this.run(request, args, loaded, deadline, inbox.cancel.signal, (done, total, message) => reply('progress', { done, total, message }));
      // The run is over and its sandbox worker free: the slot can take the next call.
      clearInterval(heartbeat);
      free();
      // Kept before it is told: a replica that reads the task once its sender is gone finds it.
      if (request.durableKey !== undefined) await this.keepCourse(request.durableKey, { state: 'done', outcome });
      // An outcome too large for one message goes in pieces, then the outcome that declares them (nats-body.ts).
      const answer = { outcome, writtenBytes };
      const json = Buffer.from(JSON.stringify(answer), 'utf8');
      const maxPayload = this.bus.maxPayload;
      if (travelsInline(json.length, maxPayload, Infinity)) reply('outcome', new EncodedJson(json));
      else {
        const { declared, parts } = splitBody(json, partBytes(maxPayload));
        for (const part of parts) {
          if (this.options.nc.isClosed()) break;
          this.bus.publish(request.replyTo, 'outcome_part', { c: request.callId, n: (sequence += 1), ttlMs: MESSAGE_TTL_MS }, part);
        }
        reply('outcome', { body: declared });
      }
      this.answered++;
      this.count(outcome.status);
    } catch (err) {
      // What the worker itself failed at (a package it could not fetch, a volume of a shape no call has) is
      // the call's crash, told to the caller in one line.
      const message = err instanceof Error ? err.message : String(err);
      this.options.log?.(`call ${request.callId} failed on ${this.name}: ${message}`);
      clearInterval(heartbeat);
      free();
      reply('refused', { message: `the worker ${this.name} could not run the call: ${message}` });
      this.count('refused');
    } finally {
      clearInterval(heartbeat);
      this.inboxes.delete(request.callId);
      // Given back whether the call ran or not (its load may still be under way: given back when it is done).
      borrowing?.then((lent) => lent.giveBack(), () => undefined);
    }
  }

  /** Writes a durable call's course; a failure is logged (the replica that sent it still hears the outcome). */
  private async keepCourse(durableKey: string, course: DurableCourse): Promise<void> {
    try {
      this.outcomes ??= NatsOutcomes.open(this.options.nc, this.options.prefix, this.options.sealingKey);
      await (await this.outcomes).write(durableKey, course);
    } catch (err) {
      this.outcomes = null;
      this.options.log?.(`the course of a durable call (${course.state}) could not be kept in the outcomes bucket: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** A call's arguments from their pieces; throws (the call is refused: it did not run) when they do not arrive whole. */
  private async receiveBody(body: BodyInbox, signal: AbortSignal): Promise<Record<string, unknown>> {
    const onAbort = (): void => body.end(new Error('it was cancelled while its arguments arrived'));
    signal.addEventListener('abort', onAbort, { once: true });
    const result = await body.result;
    signal.removeEventListener('abort', onAbort);
    if (result instanceof Error) throw result;
    let args: unknown;
    try {
      args = JSON.parse(result.toString('utf8'));
    } catch {
      throw new Error('its arguments are not JSON');
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new Error('its arguments are not an object');
    return args as Record<string, unknown>;
  }

  private async run(
    request: CallRequest, args: Record<string, unknown>, loaded: LoadedPackage, deadline: number, signal: AbortSignal, progress: (done: number, total?: number, message?: string) => void,
  ): Promise<{ outcome: FunctionCallOutcome; writtenBytes: number }> {
    const { volumesDir } = this.options;
    const tmpDir = volumeFromWire(volumesDir, 'tmp', request.tmp);
    const dataDir = request.data === undefined ? undefined : volumeFromWire(volumesDir, 'data', request.data);
    const skillsDir = request.skills === undefined ? undefined : volumeFromWire(volumesDir, 'skills', request.skills);
    if (tmpDir === null || dataDir === null || skillsDir === null) throw new Error('the call names a volume that is not a session\'s, an agent\'s or a skill set\'s directory');
    let written: number | null = null;
    const ownBudget = this.limits.writeBudgetBytes;
    const ctx: FunctionCallContext = {
      tmpDir,
      ...(dataDir !== undefined ? { dataDir } : {}),
      ...(skillsDir !== undefined ? { skillsDir } : {}),
      ...(request.egress ? { egress: request.egress } : {}),
      // The deadline is the call's, cut to this worker's own limit; every other limit is this worker's.
      limits: workerCallLimits(this.limits, deadline - Date.now()),
      // The replica reserved the quota; the run tells what it wrote (the first settle is the run's own).
      volumeBudget: { bytes: Math.min(request.writeBudgetBytes ?? ownBudget, ownBudget), settle: (bytes) => { written ??= bytes; } },
      signal,
      ...(request.progress ? { progress } : {}),
      ...traceOf(request.traceparent),
    };
    const outcome = await this.host.call(loaded, request.tool, args, ctx);
    return { outcome, writtenBytes: written ?? 0 };
  }

  private count(outcome: string): void {
    this.answers[outcome] = (this.answers[outcome] ?? 0) + 1;
  }

  /** A read-only snapshot for `/metrics`. */
  stats(): NatsWorkerStats {
    const { loadedPackages, ...sandbox } = this.loaded.stats();
    return { slots: this.options.pool, inFlight: this.inFlight, calls: { ...this.answers }, busDropped: this.bus.drops.snapshot(), loadedPackages, sandbox };
  }

  /**
   * Takes no more calls, tells the replicas it is leaving (they stop choosing it at once), lets the calls running
   * finish — still cancelling those of a replica that goes away meanwhile —, stops the sandbox.
   */
  async close(): Promise<void> {
    // Calls heard from now on are answered `busy` (the replicas ask another); the subscription stays, so the
    // calls running still hear their cancels.
    this.closing = true;
    await this.presence.leave();
    await Promise.allSettled([...this.calls]);
    if (this.replicaWatch) clearInterval(this.replicaWatch);
    await this.presence.close();
    this.subscription?.unsubscribe();
    this.subscription = null;
    await this.host.close();
  }
}

/** The package a call names, as the cache keys it (only the fields that requestProblem checked). */
function packageKey(pkg: CallRequest['package']): PackageKey {
  return { digest: pkg.digest, name: pkg.name, version: pkg.version };
}

/** What is wrong with a call's body (authentic, so a replica of another version, or a bug): null when nothing. */
function requestProblem(request: CallRequest): string | null {
  if (request.v !== PROTOCOL) return `protocol version ${String(request.v)}, this worker speaks ${PROTOCOL}`;
  if (typeof request.replica !== 'string' || !REPLICA_ID.test(request.replica)) return 'no replica';
  if (!(typeof request.timeoutMs === 'number' && request.timeoutMs > 0)) return 'no time left to run it';
  const pkg = request.package as Partial<CallRequest['package']> | undefined;
  if (typeof pkg?.digest !== 'string' || typeof pkg.name !== 'string' || typeof pkg.version !== 'string') return 'no package';
  if (typeof request.tool !== 'string') return 'no tool';
  if (request.durableKey !== undefined && !isDurableKey(request.durableKey)) return 'a durable key that is not one';
  if (request.body !== undefined) {
    if (request.arguments !== undefined) return 'both arguments and a body';
    return declaredProblem(request.body);
  }
  if (typeof request.arguments !== 'object' || request.arguments === null || Array.isArray(request.arguments)) return 'arguments that are not an object';
  return null;
}

/** A call's trace context, checked again on the worker: the bus is sealed, but a header is only ever made of a valid one. */
function traceOf(value: string | undefined): { traceparent?: string } {
  const traceparent = parseTraceparent(value);
  return traceparent !== undefined ? { traceparent } : {};
}
