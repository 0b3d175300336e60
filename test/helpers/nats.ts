/**
 * NATS for tests: the machine's shared server (127.0.0.1:4222, ../shared/reference/services.md), with names
 * made per run so parallel runs never meet, and a server of a test's own for the tests that stop it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import { natsSubjects } from '../../src/platform/scale-out/nats-calls.js';
import { BUS_SENDERS, busKey, openEnvelope, type BusKind } from '../../src/platform/scale-out/nats-envelope.js';

export const SHARED_NATS_URL = process.env.SUBAKO_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** A name of this run's own, usable as a subject token, stream or bucket name. */
export const runName = (prefix: string): string => `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;

export function connectShared(): Promise<NatsConnection> {
  return connect({ servers: SHARED_NATS_URL, name: 'subako-test' });
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** A nats-server of the test's own, on a free port, with JetStream in a temporary directory; stopped by its pid. */
export class OwnNatsServer {
  private child: ChildProcess | null = null;
  readonly dir = mkdtempSync(join(tmpdir(), 'subako-nats-'));

  /** `configFile`: a nats-server configuration (users, permissions); the port, address and JetStream store are the flags'. */
  private constructor(readonly port: number, private readonly configFile?: string) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** `options.config`: the text of a configuration file; `options.user`: how to connect to see it is up. */
  static async start(options: { config?: string; user?: { user: string; pass: string } } = {}): Promise<OwnNatsServer> {
    const port = await freePort();
    let configFile: string | undefined;
    if (options.config !== undefined) {
      configFile = join(mkdtempSync(join(tmpdir(), 'subako-nats-conf-')), 'nats.conf');
      writeFileSync(configFile, options.config);
    }
    const server = new OwnNatsServer(port, configFile);
    await server.resume(options.user);
    return server;
  }

  /** Starts (again) on the same port and store directory; resolves once the server accepts connections. */
  async resume(user?: { user: string; pass: string }): Promise<void> {
    const args = ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', join(this.dir, 'js')];
    const child = spawn('nats-server', this.configFile ? ['-c', this.configFile, ...args] : args, { stdio: 'ignore' });
    this.child = child;
    for (let attempt = 0; ; attempt++) {
      try {
        const nc = await connect({ servers: this.url, reconnect: false, ...user });
        await nc.close();
        return;
      } catch (err) {
        if (attempt > 100 || child.exitCode !== null) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** Stops the server by the pid this helper started, and waits for it to be gone. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((done) => child.once('exit', done));
    child.kill('SIGKILL');
    await gone;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
    if (this.configFile) rmSync(dirname(this.configFile), { recursive: true, force: true });
  }
}

export interface ChildWorker {
  child: ChildProcess;
  name: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

/** A real `subako worker` child process; resolves once it says it takes calls. */
export async function spawnWorker(
  options: { url: string; prefix: string; volumesDir: string; pool?: number; env?: NodeJS.ProcessEnv; repoRoot: string },
): Promise<ChildWorker> {
  const dataDir = mkdtempSync(join(tmpdir(), 'subako-worker-'));
  const argv = [join(options.repoRoot, 'bin', 'subako.js'), 'worker', '--nats', options.url, '--nats-prefix', options.prefix,
    '--pool', String(options.pool ?? 2), '--volumes-dir', options.volumesDir, '--data-dir', dataDir];
  const child = spawn(process.execPath, argv, { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => { out += chunk; });
  child.stderr!.on('data', (chunk) => { err += chunk; });
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const deadline = Date.now() + 30_000;
  while (!/taking calls/.test(out)) {
    if (child.exitCode !== null) throw new Error(`subako worker exited: ${err}`);
    if (Date.now() > deadline) throw new Error(`subako worker did not start: ${out} ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const name = /subako worker (\S+) taking calls/.exec(out)![1];
  return {
    child, name, stdout: () => out, stderr: () => err, exited,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Removes a run's object-store buckets (packages, skills, the bus's key check, durable calls' outcomes) from the shared NATS server; what is missing is skipped. */
export async function removeBuckets(prefix: string): Promise<void> {
  const nc = await connectShared();
  try {
    const subjects = natsSubjects(prefix);
    for (const bucket of [subjects.packagesBucket, subjects.skillsBucket, subjects.busBucket, subjects.outcomesBucket]) {
      await (await new Objm(nc).open(bucket).catch(() => null))?.destroy().catch(() => undefined);
    }
  } finally {
    await nc.close();
  }
}

/** A message seen on the bus: its subject, its bytes as text (for looking for what must not be in the clear), and what it says when it opens. */
export interface SeenMessage {
  subject: string;
  data: string;
  opened: { kind: BusKind; body: any } | null;
}

/**
 * Every message on the reply inboxes and the workers' presence (and, with `calls`, on all of this run's own
 * subjects), as a process holding the deployment's key reads them: opened with the bus key derived from
 * `sealingKey` (base64, the tests' SUBAKO_SECRET_KEY) and the prefix. Other runs' messages share the inboxes and
 * do not open: they are kept, unopened. Watching the calls makes every worker's call subject one with a
 * subscriber, which the NATS server then never answers "no responders", even once its worker is gone: a test that
 * kills a worker stops watching first (`stop`).
 */
export function watchBus(nc: NatsConnection, prefix: string, sealingKey: string, options: { calls?: boolean } = {}): { seen: SeenMessage[]; sentTo(from?: number): string[]; busOf(name: string): string | undefined; stop(): void } {
  const key = busKey(Buffer.from(sealingKey, 'base64'), prefix);
  const kinds = Object.keys(BUS_SENDERS) as BusKind[];
  const seen: SeenMessage[] = [];
  /** Each worker's name by its bus id, as its presence says. */
  const names = new Map<string, string>();
  const presence = natsSubjects(prefix).workerPresence;
  // Never '>': that would also subscribe to every other run's subjects.
  const subscriptions = (options.calls ? [`${prefix}.>`, '_INBOX.>'] : [presence, '_INBOX.>']).map((subject) => nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err) return;
      const opened = openEnvelope<any>(key, msg.subject, msg.data, kinds);
      if (opened.ok && opened.header.k === 'worker_presence' && typeof opened.body?.bus === 'string') names.set(opened.body.bus, opened.body.id);
      seen.push({ subject: msg.subject, data: Buffer.from(msg.data).toString('latin1'), opened: opened.ok ? { kind: opened.header.k, body: opened.body } : null });
    },
  }));
  const callSubject = new RegExp(`^${prefix}\\.calls\\.([^.]+)\\.call$`);
  return {
    seen,
    /** With `calls`: the names of the workers calls were sent to, in order, from the `from`-th message seen (a send answered `busy` counts too). */
    sentTo: (from = 0) => seen.slice(from).flatMap((m) => {
      const bus = m.opened?.kind === 'call' ? callSubject.exec(m.subject)?.[1] : undefined;
      return bus === undefined ? [] : [names.get(bus) ?? `unnamed ${bus}`];
    }),
    /** A worker's bus id, by its name, once its presence was seen. */
    busOf: (name) => [...names].find(([, n]) => n === name)?.[0],
    stop: () => { for (const subscription of subscriptions) subscription.unsubscribe(); },
  };
}
