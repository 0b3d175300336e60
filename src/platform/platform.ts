/**
 * The platform, assembled: one Store, the data directory's content stores and volumes, and the services on
 * top. The HTTP layer talks to this object only. `open` prepares the data directory, checks the sealing key
 * against the database's, and takes this process's lease; `close` stops the sweeper, lets calls in flight
 * finish, drops the lease, stops the workers and closes the store.
 *
 * Several processes may share one database (API replicas on PostgreSQL). Each is an instance with an id of its
 * own, made at open; the call log records it with every call. An instance holds a lease in the database and
 * renews it on a timer; a call left `running` is marked `unknown` only once the lease of the instance
 * running it has run out (its process died), never while that instance lives, so a replica that (re)starts
 * leaves the others' calls alone. SQLite runs the same code with one instance at a time.
 *
 * A lease can also lapse under a live process: the database out of its reach for longer than the lease. Another
 * replica then marks its running calls `unknown`. Each lease has an epoch, new whenever it is taken afresh; a call
 * records the epoch it began under, and its end is written against it (store `finishCall`): a call that outlived
 * its lease keeps the outcome it really had, and its record notes the lapse and the mark made meanwhile.
 */
import { SessionListens } from './session-listens.js';
import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { createLogger, systemClock, type Clock, type Logger, type Secret } from '../common/index.js';
import { DEFAULT_CALL_LIMITS, type CallLimits } from '../config.js';
import { DEFAULT_BUNDLE_LIMITS, type BlobStore, type BundleLimits, ContentStore } from '../package/index.js';
import { AgentService } from './agents.js';
import { ToolPinning } from './tool-pinning.js';
import { SessionToolboxes } from './calls/index.js';
import { VolumeQuotas } from './volumes/index.js';
import { ApiKeys } from './api-keys.js';
import { CallAdmission, FleetSlots, defaultCallAdmissionLimits, type CallAdmissionLimits } from './calls/index.js';
import { CallLog } from './calls/index.js';
import { Approvals, InputRelay } from './calls/index.js';
import { ValidationError } from '../errors.js';
import { newId } from './ids.js';
import { checkSealingKey } from './store/index.js';
import { SessionTasks, type SessionTasksOptions } from './tasks/index.js';
import { sweepLeftovers } from './leftovers.js';
import type { PackageRuntime } from './package-runtime.js';
import { PackageService } from './packages.js';
import type { RemoteMcp } from './remote-mcp.js';
import { SessionService } from './sessions.js';
import { UserService } from './users.js';
import { SkillService } from './skills.js';
import { PostgresStore } from './store/index.js';
import { SqliteStore } from './store/index.js';
import type { Store } from './store/index.js';
import { ConnectionService } from './connections.js';
import { VaultService } from './vaults.js';
import { StoreHealth, healthReport, type HealthReport } from './health.js';
import { VolumeBrowser } from './volume-browser.js';
import { Volumes } from './volumes/index.js';

/** How long a process's lease lasts unless `instanceLeaseMs` says otherwise. */
export const DEFAULT_INSTANCE_LEASE_MS = 30_000;
/** Shorter, and a busy event loop could miss its renewals and have its live calls marked interrupted. */
export const MIN_INSTANCE_LEASE_MS = 1_000;

export interface PlatformOptions {
  dataDir: string;
  runtime: PackageRuntime;
  remote: RemoteMcp;
  /** The 32-byte key that seals vault credentials. */
  sealingKey: Buffer;
  bundleLimits?: BundleLimits;
  limits?: Partial<CallLimits>;
  /**
   * Per-session and per-agent concurrency and queue limits; by default sized for one worker per core. A function
   * (scale-out) is read again as calls come and go: the limits follow the fleet's slots.
   */
  admission?: CallAdmissionLimits | (() => CallAdmissionLimits);
  /**
   * Scale-out: the session and agent limits hold for the calls of every replica on the database together
   * (calls/fleet-slots.ts), not for each replica alone. Off by default (one process, or replicas that each run
   * their own calls).
   */
  fleetAdmission?: boolean;
  /** How often expired sessions are removed; 60 s by default. */
  sweepIntervalMs?: number;
  /** Whether function packages may reach loopback and private addresses (local development only); 'deny' by default. */
  privateDestinations?: 'deny' | 'allow';
  /** Injected store (tests of other back ends); the embedded SQLite file otherwise. */
  store?: Store;
  /** A `postgres://` URL: the records live in that PostgreSQL database instead of the data directory's SQLite file. */
  database?: Secret;
  /** Where package bundles are kept (scale-out: the NATS object store); `<data-dir>/packages/blobs` otherwise. */
  packageBlobs?: BlobStore;
  /** Where skill bundles are kept (scale-out: the NATS object store, a bucket of their own); `<skills-dir>/blobs` otherwise. */
  skillBlobs?: BlobStore;
  /**
   * How long this process's lease lasts, in ms: its calls left `running` are marked interrupted by another
   * process this long after it stopped renewing (renewed every third of it). 30 s by default.
   */
  instanceLeaseMs?: number;
  /** The volumes' root (scale-out: a shared POSIX mount the workers see too); `<data-dir>/volumes` otherwise. */
  volumesDir?: string;
  /** Where skills are unpacked and their sets assembled (scale-out: on the shared mount); `<data-dir>/skills` otherwise. */
  skillsDir?: string;
  /** What expiry is decided against (sessions' TTL, OAuth refresh, cached remote toolboxes); the system clock by default. */
  clock?: Clock;
  /** Where failures nobody awaits are told (the sweeper's); JSON lines on stderr by default (quiet in tests). */
  logger?: Logger;
  /**
   * How long an admitted call may run before its `running` record is written (a quicker one is written once, as it
   * ends: calls/call-log.ts); 0: every call is recorded before it runs. 100 ms by default.
   */
  callRecordDelayMs?: number;
  /** When a call becomes a task, how long a task is kept, the poll interval clients are asked for (platform/tasks/). */
  tasks?: Pick<SessionTasksOptions, 'graceMs' | 'ttlMs' | 'pollIntervalMs' | 'watchEveryMs' | 'sessionTaskLimit' | 'sessionTaskLimitSetting'>;
}

export class Platform {
  readonly apiKeys: ApiKeys;
  readonly packages: PackageService;
  readonly skills: SkillService;
  readonly agents: AgentService;
  readonly vaults: VaultService;
  readonly sessions: SessionService;
  /** The OAuth connections end users make themselves, held in their vaults (connections.ts). */
  readonly connections: ConnectionService;
  /** End users: they own vaults, sessions are opened for them (users.ts). */
  readonly users: UserService;
  /** A read-only look into sessions' /volume/tmp (the console's file browser). */
  readonly tmpFiles: VolumeBrowser;
  readonly toolboxes: SessionToolboxes;
  /** Sessions' tasks for long calls (the tasks extension), durable in the store. */
  readonly tasks: SessionTasks;
  /** Sessions' `subscriptions/listen`: their change feeds, the limits on their streams, their servers' changes (session-listens.ts). */
  readonly listens: SessionListens;
  /** Each volume's quota across calls. */
  readonly quotas = new VolumeQuotas();
  readonly calls: CallLog;
  /** Calls of `require_approval` and `require_user_approval` tools held for a decision, and the approvals end users give. */
  readonly approvals: Approvals;
  /** Who may run a call now; `stopSession` / `stopAgent` end a session's or an agent's calls. */
  readonly admission: CallAdmission;
  readonly clock: Clock;
  readonly log: Logger;
  /** This process, as the call log and the leases name it (random, made at open). */
  readonly instanceId = newId('ins');
  private sweeper: NodeJS.Timeout | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;
  private leaseTick: Promise<void> | null = null;
  /** The epoch of this process's lease as last renewed: a new one means the lease had lapsed meanwhile. */
  private leaseEpoch: string | null = null;
  private closed = false;
  private readonly storeHealth: StoreHealth;

  private constructor(
    readonly store: Store,
    readonly options: PlatformOptions,
    readonly volumes: Volumes,
    packageBlobs: ContentStore,
    skillBlobs: ContentStore,
  ) {
    const limits = options.bundleLimits ?? DEFAULT_BUNDLE_LIMITS;
    this.clock = options.clock ?? systemClock;
    this.log = options.logger ?? createLogger();
    this.apiKeys = new ApiKeys(store);
    this.packages = new PackageService(store, packageBlobs, options.runtime, join(options.dataDir, 'scratch'), limits);
    this.skills = new SkillService(store, skillBlobs, limits);
    // Calls in flight are known to the admission registry; deletion stops them before the volume moves.
    this.admission = new CallAdmission(options.admission ?? defaultCallAdmissionLimits(Math.max(2, availableParallelism())));
    const stopCalls = async (sessionIds: readonly string[], agentId?: string): Promise<void> => {
      await Promise.all([
        ...sessionIds.map((id) => this.admission.stopSession(id)),
        ...(agentId ? [this.admission.stopAgent(agentId)] : []),
      ]);
    };
    // An OAuth refresh takes the store's lock for its credential: one refresh at a time across the replicas.
    this.vaults = new VaultService(store, options.sealingKey, this.clock, this.log.child({ component: 'vaults' }), (name, work) => store.exclusively(name, work));
    this.connections = new ConnectionService({ store, vaults: this.vaults, key: options.sealingKey, clock: this.clock, log: this.log.child({ component: 'connections' }) });
    // Remote tool definitions are pinned with each agent version, through the vault credentials sessions use.
    this.agents = new AgentService(store, volumes, stopCalls, new ToolPinning(options.remote, this.vaults));
    // The embedded store has no other writer, so live sessions can be kept by token (sessions.ts).
    this.sessions = new SessionService(store, volumes, stopCalls, this.clock, { cacheByToken: store instanceof SqliteStore });
    this.users = new UserService(store, this.sessions, (id) => this.connections.revokeAll(id));
    this.tmpFiles = new VolumeBrowser(this.sessions, volumes);
    this.storeHealth = new StoreHealth(store);
    const callTimeoutMs = options.limits?.callTimeoutMs ?? DEFAULT_CALL_LIMITS.callTimeoutMs;
    this.calls = new CallLog({
      store, callTimeoutMs, instanceId: this.instanceId, sealingKey: options.sealingKey, clock: this.clock, log: this.log.child({ component: 'call-log' }),
      ...(options.callRecordDelayMs !== undefined ? { callRecordDelayMs: options.callRecordDelayMs } : {}),
    });
    // A call waits for a person as long as it may wait for a turn; once approved, its deadline starts afresh.
    this.approvals = new Approvals({ store, key: options.sealingKey, windowMs: callTimeoutMs, clock: this.clock });
    // The one session tool pipeline: tools built once per session, each composed once with the call log, its
    // approval and admission.
    this.toolboxes = new SessionToolboxes({
      store, packages: this.packages, skills: this.skills, runtime: options.runtime, vaults: this.vaults, volumes,
      remote: options.remote, limits: options.limits, quotas: this.quotas, calls: this.calls, admission: this.admission, approvals: this.approvals, clock: this.clock,
      ...(options.fleetAdmission ? { fleetSlots: this.fleetSlots(store) } : {}),
      privateDestinations: options.privateDestinations ?? 'deny',
      // Input a remote tool asks its client for, passed through sessions: its state sealed, a continuation of an approved
      // call spent once, as an elicited approval is.
      inputRelay: new InputRelay({ key: options.sealingKey, clock: this.clock, spendOnce: (id, expiresAt) => store.redeemApproval(id, expiresAt) }),
      sealingKey: options.sealingKey,
      connections: this.connections,
      report: (error) => this.log.child({ component: 'sessions' }).warn({ err: error }, error.message),
    });
    this.tasks = new SessionTasks({
      store, sealingKey: options.sealingKey, instanceId: this.instanceId, clock: this.clock, ...options.tasks,
      // In scale-out, a task's call on a worker outlives this replica: any replica finds its course.
      ...(options.runtime.durableCourse ? { durable: (key: string) => options.runtime.durableCourse!(key) } : {}),
      report: (error) => this.log.child({ component: 'tasks' }).warn({ err: error }, error.message),
    });
    this.listens = new SessionListens({
      evict: (id) => this.toolboxes.evict(id),
      report: (error) => this.log.child({ component: 'sessions' }).warn({ err: error }, error.message),
    });
    this.sessions.onGone((id) => this.toolboxes.evict(id));
    this.sessions.onGone((id) => this.listens.drop(id));
    this.sessions.onGone((id) => this.quotas.forget(join(volumes.sessionDir(id), 'tmp')));
    // A deleted or expired session's calls are aborted, running or waiting (deleting an agent deletes each
    // of its sessions through the same notice).
    this.sessions.onGone((id) => void this.admission.stopSession(id));
    this.sessions.onGone((id) => this.approvals.dropSession(id));
  }

  /** The slots every replica's calls share, sized by this replica's admission limits (which follow the fleet). */
  private fleetSlots(store: Store): FleetSlots {
    return new FleetSlots({
      store, instanceId: this.instanceId,
      limits: () => ({ agent: this.admission.limits.agentConcurrency, session: this.admission.limits.sessionConcurrency }),
      report: (error) => this.log.child({ component: 'admission' }).warn({}, error.message),
    });
  }

  static async open(options: PlatformOptions): Promise<Platform> {
    const leaseMs = options.instanceLeaseMs ?? DEFAULT_INSTANCE_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs < MIN_INSTANCE_LEASE_MS) {
      throw new ValidationError([{
        code: 'config.instance_lease_ms',
        message: `the instance lease must be a whole number of milliseconds, at least ${MIN_INSTANCE_LEASE_MS} (got ${leaseMs})`,
      }]);
    }
    await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    const volumesDir = options.volumesDir ?? join(options.dataDir, 'volumes');
    for (const dir of ['sessions', 'agents']) {
      await mkdir(join(volumesDir, dir), { recursive: true });
    }
    const limits = options.bundleLimits ?? DEFAULT_BUNDLE_LIMITS;
    const packageBlobs = new ContentStore(join(options.dataDir, 'packages'), limits, options.packageBlobs);
    const skillBlobs = new ContentStore(options.skillsDir ?? join(options.dataDir, 'skills'), limits, options.skillBlobs);
    await packageBlobs.init();
    await skillBlobs.init();
    const store = options.store
      ?? (options.database ? await PostgresStore.open(options.database) : new SqliteStore(join(options.dataDir, 'subako.db')));
    const platform = new Platform(store, options, new Volumes(volumesDir), packageBlobs, skillBlobs);
    try {
      // Before anything is written: a process holding another key would seal what the others cannot open.
      await checkSealingKey(store, options.sealingKey);
      // Leftovers of a process killed mid-way (uploads, orphan blobs, volumes, the trash), before serving.
      await sweepLeftovers(store, platform.volumes, { packages: packageBlobs, skills: skillBlobs }, join(options.dataDir, 'scratch'));
      // The lease first, so that no call this process records is ever an orphan in another's eyes.
      platform.leaseEpoch = await store.renewInstanceLease(platform.instanceId, leaseMs);
      await store.interruptOrphanedCalls();
      await platform.sessions.sweepExpired();
    } catch (err) {
      // A store this opened is closed again: a PostgreSQL pool left open would keep a failed start from exiting.
      if (!options.store) await store.close();
      throw err;
    }
    const interval = options.sweepIntervalMs ?? 60_000;
    // Each chore's failure is logged and the next tick tries again: nobody awaits them, and one chore failing
    // (a locked store, a busy trash directory) must not stop the others.
    const sweeperLog = platform.log.child({ component: 'sweeper' });
    const chore = (name: string, work: () => Promise<unknown>) => {
      work().catch((err: unknown) => sweeperLog.error({ err, chore: name }, `the sweeper's ${name} failed; it runs again in ${interval} ms`));
    };
    platform.sweeper = setInterval(() => {
      chore('expired sessions', () => platform.sessions.sweepExpired());
      chore('trash', () => platform.volumes.emptyTrash());
      chore('idempotency records', () => store.pruneIdempotent(new Date(platform.clock.now() - 24 * 3600_000).toISOString()));
      chore('call idempotency keys', () => store.pruneCallKeys(new Date(platform.clock.now()).toISOString()));
      // Decided approvals are kept a day (a late second decision is told 409, not 404); spent ids as long.
      chore('approvals', () => store.pruneApprovals(new Date(platform.clock.now() - 24 * 3600_000).toISOString()));
      chore('tasks', () => platform.tasks.prune());
    }, interval);
    platform.sweeper.unref();
    // Renewed well before it runs out (a renewal may fail once, the database busy, and the next one still be
    // in time); each tick also ends the calls of processes whose lease ran out meanwhile.
    const leaseLog = platform.log.child({ component: 'instance-lease' });
    const renewEvery = Math.max(1, Math.floor(leaseMs / 3));
    const tick = async (): Promise<void> => {
      try {
        const epoch = await store.renewInstanceLease(platform.instanceId, leaseMs);
        if (epoch !== platform.leaseEpoch) {
          leaseLog.warn({ epoch, previous: platform.leaseEpoch },
            `this process's lease had lapsed (the database was out of reach for longer than its ${leaseMs} ms) and is taken afresh; another ` +
            'process may have marked its running calls unknown meanwhile: their ends are still written, with the lapse noted in their records');
          platform.leaseEpoch = epoch;
        }
      } catch (err) {
        leaseLog.error({ err }, `renewing this process's lease failed; it is tried again in ${renewEvery} ms`);
        return;
      }
      await store.interruptOrphanedCalls().catch((err: unknown) => {
        leaseLog.error({ err }, `marking the calls of stopped processes interrupted failed; it is tried again in ${renewEvery} ms`);
      });
    };
    platform.leaseTimer = setInterval(() => {
      // A tick still running (a slow database) is not doubled; close waits for it.
      if (platform.leaseTick) return;
      platform.leaseTick = tick().finally(() => { platform.leaseTick = null; });
    }, renewEvery);
    platform.leaseTimer.unref();
    return platform;
  }

  /** The store, the bus and the fleet as this process sees them now (`/v1/health`). */
  async health(): Promise<HealthReport> {
    return healthReport(await this.storeHealth.problem(), this.options.runtime.health?.() ?? null);
  }

  /**
   * The first step of a shutdown: calls held for a person end now (nobody can decide them any more), so that
   * what is left to wait for is the calls that run, each within its deadline.
   */
  beginClosing(): void {
    this.approvals.close();
    // Listen streams never end on their own: ended now, they hold nothing.
    this.listens.endAll();
  }

  /**
   * Stops the sweeper, waits up to `graceMs` for calls in flight and for call ends held for the database, stops
   * the workers, closes the store.
   */
  async close(graceMs = 30_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    // Nobody can decide a held call any more: it ends now rather than holding the shutdown to its deadline.
    this.approvals.close();
    await this.listens.closeAll();
    const started = performance.now();
    await this.calls.drain(graceMs);
    await this.tasks.drain(Math.max(0, graceMs - (performance.now() - started)));
    // Ends the database could not take: written if it comes back within the grace, else given up (and their calls
    // marked unknown by whichever process sees this one's lease lapse).
    await this.calls.flushEnds(Math.max(0, graceMs - (performance.now() - started)));
    this.calls.close();
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    await this.leaseTick;
    // Calls the grace period did not see end are this process's to mark; none should be left. A database
    // gone by now must not keep the rest from closing: the lease then runs out, and another process marks them.
    await this.store.releaseInstance(this.instanceId).catch((err: unknown) => {
      this.log.error({ err }, "dropping this process's lease failed; its calls left running are marked interrupted once the lease runs out");
    });
    await this.options.runtime.close();
    await this.store.close();
  }
}
