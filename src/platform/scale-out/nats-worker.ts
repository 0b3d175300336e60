/**
 * A worker node (`subako worker --nats URL`): takes calls from the NATS queue group, runs each in its
 * sandbox pool (the same FunctionHost as `subako serve`), performs the call's egress, and answers (wire
 * protocol: nats-calls.ts).
 *
 * Flow control: the worker holds one queue subscription for its whole life, and answers `busy` to a call it
 * hears with every slot taken; the replica then offers the call again (to a worker the server picks anew), with
 * a short pause, until its deadline. One subscription rather than one per free slot, each for one message and
 * made again when its call ended: that was a SUB and an UNSUB, two writes and two changes of the server's
 * subscription table, on every call. A call is never queued without bound: nothing waits on the bus, the
 * replica holds it. With no worker at all, the server answers "no responders" at once. Chosen over JetStream pull
 * consumers with max ack pending because a call is a request that someone waits for: it must not outlive its
 * deadline in a stream, nor be redelivered after a worker died mid-call (calls are never retried), and core
 * NATS adds no storage round trip to each call.
 *
 * Package bundles come from the object store by digest (verified on read) and are unpacked into this
 * worker's data directory once; loaded packages are kept by digest (loaded-packages.ts). A deleted package
 * version is not announced on the bus: the worker keeps at most `maxLoadedPackages`, the least recently
 * called leaving first, and the FunctionHost releases the modules no package holds after a while.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { FunctionHost, type FunctionCallContext, type FunctionCallOutcome, type FunctionHostStats, type LoadedPackage } from '../../function/index.js';
import { ContentStore, type BlobStore, type BundleLimits } from '../../package/index.js';
import { DEFAULT_CALL_LIMITS, type CallLimits } from '../../config.js';
import {
  HEARTBEAT_MS, MESSAGE_TTL_MS, PROTOCOL, REPLICA_ID, START_WAIT_MS, SealedBus, WORKER_HOST, WORKER_QUEUE, natsSubjects, volumeFromWire, workerCallLimits,
  type CallRequest, type NatsSubjects, type StartBody, type WorkerBodies, type WorkerKind,
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

/** What the replica said to a call this worker took: start it (or not), then perhaps cancel it. */
interface CallInbox {
  callId: string;
  /** The replica that sent the call (its bus id): the call is cancelled once its presence lapses. */
  replica: string;
  started: ((run: boolean) => void) | null;
  cancel: AbortController;
  /** The call's arguments, when they follow `start` in pieces (nats-body.ts); null when they came in the call. */
  body: BodyInbox | null;
  /** A durable call (a task's): run on when its replica goes quiet, its course kept in the outcomes bucket. */
  durable: boolean;
  /** A durable call whose replica went quiet (said once). */
  orphaned?: boolean;
}

/** How long a worker waits for the next piece of a call's arguments before it refuses the call (the pieces follow `start` at once). */
const BODY_PIECE_WAIT_MS = START_WAIT_MS;

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

  /** Starts counting the wait for the next piece (from `start` on); each piece counts it again. */
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
  /** Call ids taken, each until its call could no longer be taken anyway: a call sent again is dropped. */
  private readonly taken = new ReplayGuard();
  /** This worker's inbox: `<inbox>.<n>` is where the replica says start or cancel for the n-th call taken. */
  private readonly inbox = createInbox();
  private nextCall = 0;
  private readonly inboxes = new Map<string, CallInbox>();
  private readonly loaded: LoadedPackages;
  /** The one queue subscription this worker takes calls on. */
  private callsSub: Subscription | null = null;
  private readonly calls = new Set<Promise<void>>();
  private inboxSub: Subscription | null = null;
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
    this.limits = { ...DEFAULT_CALL_LIMITS, ...options.limits };
    this.host = new FunctionHost({ poolSize: options.pool, limits: options.limits, preparedCacheDir: join(options.dataDir, 'cache', 'prepared') });
    this.packages = new ContentStore(join(options.dataDir, 'packages'), options.bundleLimits, options.blobs);
    this.loaded = new LoadedPackages(this.host, (key) => this.packages.tree(key.digest), { maxPackages: options.maxLoadedPackages });
    this.bus = new SealedBus(options.nc, busKey(options.sealingKey, options.prefix), new BusDrops(options.log));
    this.presence = new PresenceChannel({
      bus: this.bus,
      announceOn: this.subjects.workerPresence, announceAs: 'worker_presence',
      mine: () => ({ v: PROTOCOL, id: this.name, host: this.hostName, version: SUBAKO_VERSION, slots: options.pool, busy: this.inFlight }),
      listenOn: this.subjects.replicaPresence, listenFor: 'replica_presence', read: readReplicaPresence, lapseMs: REPLICA_LAPSE_MS,
      // A replica just started (or back after an outage) learns of this worker at once, not a beat later.
      onArrival: () => this.presence.announce(),
    });
  }

  async start(): Promise<void> {
    await this.packages.init();
    this.inboxSub = this.options.nc.subscribe(`${this.inbox}.*`, { callback: (err, msg) => { if (!err) this.onInbox(msg); } });
    this.callsSub = this.options.nc.subscribe(this.subjects.calls, { queue: WORKER_QUEUE, callback: (err, msg) => { if (!err) this.onCall(msg); } });
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

  /** A `start` or `cancel` from the replica, for a call this worker took (anything else is dropped). */
  private onInbox(msg: Msg): void {
    const call = this.inboxes.get(msg.subject);
    const opened = this.bus.open<StartBody | Record<string, never> | Uint8Array>(msg, ['start', 'cancel', 'body']);
    if (opened === null) return;
    // A message for another call on this call's subject was sealed for that call's inbox: it did not open. The id must agree too.
    if (call === undefined || call.callId !== opened.header.c) return this.bus.drops.drop('unexpected', msg.subject);
    if (opened.header.k === 'body') {
      // Pieces count only once the call was started; one before `start` is out of place.
      const drop = call.body === null || call.started !== null ? 'unexpected' : call.body.piece(opened.header.n, opened.body as Uint8Array);
      if (drop !== null) this.bus.drops.drop(drop, msg.subject);
      return;
    }
    if (opened.header.k === 'cancel') {
      call.cancel.abort();
      return;
    }
    const started = call.started;
    // A second start for the same call is a replay: the first one decided.
    if (started === null) return this.bus.drops.drop('replayed', msg.subject);
    call.started = null;
    const run = (opened.body as StartBody).run === true;
    if (run) call.body?.wait();
    started(run);
  }

  /**
   * A call heard on the queue subscription: taken while a slot is free; with every slot taken, answered `busy`
   * (when it opens and names where to answer), and the replica offers it again.
   */
  private onCall(msg: Msg): void {
    if (this.closing) return;
    if (this.inFlight >= this.options.pool) return this.answerBusy(msg);
    // The slot is free again once, as soon as the call no longer needs it: before its last answer goes out
    // (take's `free`), or when take ends, whichever is first.
    let freed = false;
    this.inFlight += 1;
    const free = (): void => {
      if (freed) return;
      freed = true;
      this.inFlight -= 1;
    };
    const call = this.take(msg, free).finally(() => {
      this.calls.delete(call);
      free();
    });
    this.calls.add(call);
  }

  private answerBusy(msg: Msg): void {
    const opened = this.bus.open<CallRequest>(msg, ['call']);
    if (opened === null) return;
    const request = opened.body;
    if (request?.callId !== opened.header.c || typeof request.replyTo !== 'string' || !REPLY_SUBJECT.test(request.replyTo)) return this.bus.drops.drop('malformed', msg.subject);
    this.bus.publish(request.replyTo, 'busy', { c: request.callId, n: 1, ttlMs: MESSAGE_TTL_MS }, {});
  }

  /**
   * Takes one call: opens it (a message that does not open, or a call id already taken, is dropped unanswered),
   * says `accepted` with the inbox for this call, waits for the replica's `start`, runs it and answers.
   * `free` gives its slot back: called just before the outcome (or a refusal after the run) is published, so a
   * caller that sends its next call on hearing the answer finds the slot free rather than `busy` and a pause.
   */
  private async take(msg: Msg, free: () => void): Promise<void> {
    const opened = this.bus.open<CallRequest>(msg, ['call']);
    if (opened === null) return;
    const request = opened.body;
    if (request?.callId !== opened.header.c || typeof request.replyTo !== 'string' || !REPLY_SUBJECT.test(request.replyTo)) {
      return this.bus.drops.drop('malformed', msg.subject);
    }
    if (!this.taken.firstTime(request.callId, opened.header.e)) return this.bus.drops.drop('replayed', msg.subject);
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
    const subject = `${this.inbox}.${(this.nextCall += 1).toString(36)}`;
    const inbox: CallInbox = {
      callId: request.callId, replica: request.replica, started: null, cancel: new AbortController(), body: request.body ? new BodyInbox(request.body) : null,
      durable: request.durableKey !== undefined,
    };
    // The call itself shows its replica alive now (it may not have announced itself to this worker yet).
    this.presence.table.touch({ v: PROTOCOL, id: request.replica }, Date.now());
    const started = new Promise<boolean>((resolve) => { inbox.started = resolve; });
    this.inboxes.set(subject, inbox);
    let heartbeat: NodeJS.Timeout | undefined;
    let borrowing: ReturnType<LoadedPackages['borrow']> | undefined;
    try {
      reply('accepted', { worker: this.name, host: this.hostName, inbox: subject });
      // The package is made ready while the replica's word comes; the guest runs only once it has come.
      borrowing = this.loaded.borrow(packageKey(request.package));
      borrowing.catch(() => undefined);
      if (!(await this.waitForStart(started, Math.min(START_WAIT_MS, request.timeoutMs)))) return;
      heartbeat = setInterval(() => reply('alive', {}), HEARTBEAT_MS);
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
      this.inboxes.delete(subject);
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

  /** Whether the replica said to run the call within `ms` (no word: another worker took it, or the call is gone). */
  private async waitForStart(started: Promise<boolean>, ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const run = await Promise.race([started, new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), Math.max(1, ms)); })]);
    clearTimeout(timer);
    return run;
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
   * Takes no more calls, tells the replicas it is leaving (they stop counting it at once), lets the calls running
   * finish — still cancelling those of a replica that goes away meanwhile —, stops the sandbox.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.callsSub?.unsubscribe();
    this.callsSub = null;
    await this.presence.leave();
    await Promise.allSettled([...this.calls]);
    if (this.replicaWatch) clearInterval(this.replicaWatch);
    await this.presence.close();
    this.inboxSub?.unsubscribe();
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
