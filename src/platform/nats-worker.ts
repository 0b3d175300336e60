/**
 * A worker node (`subako worker --nats URL`): takes calls from the NATS queue group, runs each in its
 * sandbox pool (the same FunctionHost as `subako serve`), performs the call's egress, and answers (wire
 * protocol: nats-calls.ts).
 *
 * Flow control: the worker holds one queue subscription per free slot, each for a single message (the NATS
 * server stops delivering to it after one: UNSUB with a maximum), and subscribes again when the slot frees.
 * A worker at capacity has no subscription left, so the server never hands it more; a call that no worker can
 * take is answered "no responders" at once rather than queued without bound. Chosen over JetStream pull
 * consumers with max ack pending because a call is a request that someone waits for: it must not outlive its
 * deadline in a stream, nor be redelivered after a worker died mid-call (calls are never retried), and core
 * NATS adds no storage round trip to each call.
 *
 * Package bundles come from the object store by digest (verified on read) and are unpacked into this
 * worker's data directory once; compiled modules are kept by the FunctionHost.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { SealError } from '../common/index.js';
import { ValidationError } from '../errors.js';
import { FunctionHost, type FunctionCallContext, type FunctionCallOutcome, type FunctionHostStats, type LoadedPackage } from '../function/index.js';
import { ContentStore, readPackageDir, type BlobStore, type BundleLimits } from '../package/index.js';
import type { CallLimits } from '../config.js';
import {
  HEARTBEAT_MS, WORKER_QUEUE, decodeMessage, encodeMessage, natsSubjects, unsealCredentials, volumeFromWire,
  type CallRequest, type CancelMessage, type NatsSubjects, type WorkerMessage,
} from './nats-calls.js';

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
  sealingKey: Buffer;
  limits?: Partial<CallLimits>;
  bundleLimits?: BundleLimits;
  /** Names this worker in answers and logs; default host name and pid. */
  name?: string;
  log?: (line: string) => void;
}

/** What a worker's `/metrics` reads (server/'s WorkerMetrics): its slots, its calls, its sandbox. */
export interface NatsWorkerStats {
  slots: number;
  /** Calls taken and not answered yet. */
  inFlight: number;
  /** Calls answered, by the outcome's status (ok, tool_error, crash, cancelled) or `refused` (not run). */
  calls: Readonly<Record<string, number>>;
  sandbox: FunctionHostStats;
}

export class NatsWorker {
  readonly name: string;
  private readonly subjects: NatsSubjects;
  private readonly host: FunctionHost;
  private readonly packages: ContentStore;
  private readonly loaded = new Map<string, Promise<LoadedPackage>>();
  private readonly running = new Map<string, AbortController>();
  private readonly slots = new Set<Subscription>();
  private readonly calls = new Set<Promise<void>>();
  private cancelSub: Subscription | null = null;
  private closing = false;
  /** Calls this worker answered, for its log line and its tests. */
  answered = 0;
  private readonly answers: Record<string, number> = {};
  /** Calls taken whose slot is not free again yet (a call's bookkeeping may outlast its answer by a moment). */
  private inFlight = 0;

  constructor(private readonly options: NatsWorkerOptions) {
    this.name = options.name ?? `${hostname()}:${process.pid}`;
    this.subjects = natsSubjects(options.prefix);
    this.host = new FunctionHost({ poolSize: options.pool, limits: options.limits, preparedCacheDir: join(options.dataDir, 'cache', 'prepared') });
    this.packages = new ContentStore(join(options.dataDir, 'packages'), options.bundleLimits, options.blobs);
  }

  async start(): Promise<void> {
    await this.packages.init();
    this.cancelSub = this.options.nc.subscribe(this.subjects.cancel, {
      callback: (err, msg) => {
        if (err) return;
        const { callId } = decodeMessage<CancelMessage>(msg.data);
        this.running.get(callId)?.abort();
      },
    });
    for (let slot = 0; slot < this.options.pool; slot++) this.offerSlot();
    // The subscriptions reach the server before the worker says it is ready.
    await this.options.nc.flush();
  }

  /** One free slot: a queue subscription for exactly one call. */
  private offerSlot(): void {
    if (this.closing || this.options.nc.isClosed()) return;
    const sub = this.options.nc.subscribe(this.subjects.calls, {
      queue: WORKER_QUEUE,
      max: 1,
      callback: (err, msg) => {
        this.slots.delete(sub);
        if (err) return;
        // The slot is offered again once, as soon as the call no longer needs it: before its last answer
        // goes out (take's `free`), or when take ends, whichever is first.
        let offered = false;
        this.inFlight += 1;
        const free = (): void => {
          if (offered) return;
          offered = true;
          this.inFlight -= 1;
          this.offerSlot();
        };
        const call = this.take(msg, free).finally(() => {
          this.calls.delete(call);
          free();
        });
        this.calls.add(call);
      },
    });
    this.slots.add(sub);
  }

  /**
   * Runs one call and answers it. `free` offers its slot again: called just before the outcome (or a refusal
   * after the run) is published, so the new subscription reaches the server ahead of the answer on this
   * connection, and a caller that sends its next call on hearing the answer finds the slot there rather
   * than "no responders" and a pause (which a sequence of calls to a one-slot worker met in 1.5 % of calls).
   */
  private async take(msg: Msg, free: () => void): Promise<void> {
    const reply = (message: WorkerMessage): void => {
      if (msg.reply && !this.options.nc.isClosed()) this.options.nc.publish(msg.reply, encodeMessage(message));
    };
    let request: CallRequest;
    try {
      request = decodeMessage<CallRequest>(msg.data);
      if (request.v !== 1) throw new Error(`protocol version ${String(request.v)}`);
      if (!(request.timeoutMs > 0)) throw new Error('no time left to run it');
    } catch (err) {
      reply({ kind: 'refused', message: `the worker ${this.name} could not read the call (${err instanceof Error ? err.message : String(err)}); run the same subako version on replicas and workers` });
      this.count('refused');
      return;
    }
    const deadline = Date.now() + request.timeoutMs;
    reply({ kind: 'accepted', worker: this.name });
    const heartbeat = setInterval(() => reply({ kind: 'alive' }), HEARTBEAT_MS);
    const abort = new AbortController();
    this.running.set(request.callId, abort);
    try {
      const { outcome, writtenBytes } = await this.run(request, deadline, abort.signal, reply);
      // The run is over and its sandbox worker free: the slot can take the next call.
      clearInterval(heartbeat);
      free();
      reply({ kind: 'outcome', outcome, writtenBytes });
      this.answered++;
      this.count(outcome.status);
    } catch (err) {
      // What the worker itself failed at (a package it could not fetch, a volume outside its root) is the
      // call's crash, told to the caller in one line.
      const message = err instanceof Error ? err.message : String(err);
      this.options.log?.(`call ${request.callId} failed on ${this.name}: ${message}`);
      clearInterval(heartbeat);
      free();
      reply({ kind: 'refused', message: `the worker ${this.name} could not run the call: ${message}` });
      this.count('refused');
    } finally {
      clearInterval(heartbeat);
      this.running.delete(request.callId);
    }
  }

  private async run(request: CallRequest, deadline: number, signal: AbortSignal, reply: (message: WorkerMessage) => void): Promise<{ outcome: FunctionCallOutcome; writtenBytes: number }> {
    const { volumesDir, sealingKey } = this.options;
    const tmpDir = volumeFromWire(volumesDir, request.tmp);
    const dataDir = request.data === undefined ? undefined : volumeFromWire(volumesDir, request.data);
    const skillsDir = request.skills === undefined ? undefined : volumeFromWire(volumesDir, request.skills);
    if (tmpDir === null || dataDir === null || skillsDir === null) throw new Error('the call names a volume outside the volumes root');
    const loaded = await this.load(request.package.digest, request.package.name, request.package.version);
    let written: number | null = null;
    const remaining = Math.max(1, deadline - Date.now());
    const ctx: FunctionCallContext = {
      tmpDir,
      ...(dataDir !== undefined ? { dataDir } : {}),
      ...(skillsDir !== undefined ? { skillsDir } : {}),
      ...(request.egress ? {
        egress: {
          allow: request.egress.allow, grants: request.egress.grants, privateDestinations: request.egress.privateDestinations,
          ...(request.egress.ca !== undefined ? { ca: request.egress.ca } : {}),
          credentials: openCredentials(request.egress.sealedCredentials, request.callId, sealingKey),
        },
      } : {}),
      // The shortest of: what is left of the deadline, the replica's limit, this worker's own.
      limits: { ...request.limits, callTimeoutMs: Math.min(remaining, request.limits?.callTimeoutMs ?? remaining, this.options.limits?.callTimeoutMs ?? remaining) },
      // The replica reserved the quota; the run tells what it wrote (the first settle is the run's own).
      volumeBudget: { bytes: request.writeBudgetBytes ?? Number.POSITIVE_INFINITY, settle: (bytes) => { written ??= bytes; } },
      signal,
      ...(request.progress ? { progress: (done: number, total?: number, message?: string) => reply({ kind: 'progress', done, total, message }) } : {}),
    };
    const outcome = await this.host.call(loaded, request.tool, request.arguments, ctx);
    return { outcome, writtenBytes: written ?? 0 };
  }

  private load(digest: string, name: string, version: string): Promise<LoadedPackage> {
    let loading = this.loaded.get(digest);
    if (!loading) {
      loading = (async () => {
        const dir = await this.packages.tree(digest);
        const read = await readPackageDir(dir);
        if (!read.ok) throw new ValidationError(read.problems);
        return this.host.load({ name, version, description: read.manifest.description, moduleBytes: read.moduleBytes, assetsDir: read.assetsDir });
      })();
      this.loaded.set(digest, loading);
      loading.catch(() => this.loaded.delete(digest));
    }
    return loading;
  }

  private count(outcome: string): void {
    this.answers[outcome] = (this.answers[outcome] ?? 0) + 1;
  }

  /** A read-only snapshot for `/metrics`. */
  stats(): NatsWorkerStats {
    return { slots: this.options.pool, inFlight: this.inFlight, calls: { ...this.answers }, sandbox: this.host.stats() };
  }

  /** Takes no more calls, lets those running finish, stops the sandbox. */
  async close(): Promise<void> {
    this.closing = true;
    for (const sub of this.slots) sub.unsubscribe();
    this.slots.clear();
    await Promise.allSettled([...this.calls]);
    this.cancelSub?.unsubscribe();
    await this.host.close();
  }
}

/** A call's credentials, opened; a worker holding another key than the replicas' is told how to fix it. */
function openCredentials(sealed: string, callId: string, key: Buffer): ReturnType<typeof unsealCredentials> {
  try {
    return unsealCredentials(sealed, callId, key);
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    throw new SealError(err.reason, "the call's credentials do not open with this worker's sealing key; give every worker the API replicas' SUBAKO_SECRET_KEY", { cause: err });
  }
}
