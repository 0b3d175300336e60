/**
 * Test harness: a real platform server in this process on an ephemeral port (real SQLite, real worker
 * pool, the repository's example packages), or a real `subako serve` child process; plus a small client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, fixture } from '../../helpers/paths.js';
import { startServer, type StartOptions } from '../../../src/app.js';
import type { SubakoServer } from '../../../src/server/index.js';
import type { CallLimits } from '../../../src/config.js';
import { Secret, type Clock } from '../../../src/common/index.js';
import type { McpClientPool } from '../../../src/mcp/index.js';

export interface Api {
  url: string;
  apiKey: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
}

export function makeApi(url: string, apiKey: string): Api {
  return {
    url,
    apiKey,
    async call(method, path, body, headers = {}) {
      const init: RequestInit = { method, headers: { authorization: `Bearer ${apiKey}`, ...headers } };
      if (body !== undefined) {
        if (Buffer.isBuffer(body) || body instanceof Uint8Array) {
          init.body = new Uint8Array(body);
          (init.headers as Record<string, string>)['content-type'] ??= 'application/gzip';
        } else {
          init.body = JSON.stringify(body);
          (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
        }
      }
      const response = await fetch(`${url}${path}`, init).catch((error: unknown) => {
        // undici says only "fetch failed"; the cause (a reset, a refused connection) is what a reader needs.
        const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message} (${(error.cause as NodeJS.ErrnoException).code ?? error.cause.name})` : '';
        throw new Error(`${method} ${path} failed${cause}`, { cause: error });
      });
      const text = await response.text();
      let parsed: unknown = text;
      try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
      return { status: response.status, body: parsed, headers: response.headers };
    },
  };
}

export const tempDir = (prefix = 'subako-server-'): string => mkdtempSync(join(tmpdir(), prefix));
export const EXAMPLES = join(REPO_ROOT, 'examples', 'packages');
export const TEST_KEY = { SUBAKO_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };

export interface InProcess extends Api {
  server: SubakoServer;
  /** The server's connections to remote MCP servers. */
  remotePool: McpClientPool;
  dataDir: string;
  agentId: string;
  close(): Promise<void>;
}

export async function startInProcess(options: { limits?: Partial<CallLimits>; dataDir?: string; publicUrl?: string; clock?: Clock; workers?: number } = {}): Promise<InProcess> {
  const dataDir = options.dataDir ?? tempDir();
  const { server, firstStart, remotePool } = await startServer({
    dataDir, port: 0, workers: options.workers ?? 2, examplesDir: EXAMPLES, limits: options.limits, env: { ...process.env, ...TEST_KEY },
    publicUrl: options.publicUrl, clock: options.clock,
  });
  if (!firstStart) throw new Error('expected a first start');
  return { ...makeApi(server.url, firstStart.apiKey), server, remotePool, dataDir, agentId: firstStart.agentId!, close: () => server.close(5_000) };
}

/** A package directory holding the abi_probe guest, whose tools misbehave on request. */
/**
 * One API replica in this process on a shared PostgreSQL database (and NATS, when given), with its own data
 * directory: its server, and the admin key when it made the first start (null for a later replica).
 */
export async function startReplica(
  options: { databaseUrl: string; nats?: { url: string; prefix: string }; oauthDoor?: StartOptions['oauthDoor'] },
): Promise<{ server: SubakoServer; apiKey: string | null }> {
  const { server, firstStart } = await startServer({
    dataDir: tempDir('subako-replica-'), port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY },
    database: new Secret(options.databaseUrl), ...(options.nats ? { nats: options.nats } : {}), ...(options.oauthDoor ? { oauthDoor: options.oauthDoor } : {}),
  });
  return { server, apiKey: firstStart?.apiKey ?? null };
}

/**
 * Two replicas on one database (and bus, when given), both pushed onto `servers` for the file's `after` to close
 * even when the second fails to start; each side's REST API with the first start's admin key.
 */
export async function startTwoReplicas(
  options: Parameters<typeof startReplica>[0],
  servers: SubakoServer[],
): Promise<{ a: Api; b: Api }> {
  const first = await startReplica(options);
  servers.push(first.server);
  const second = await startReplica(options);
  servers.push(second.server);
  return { a: makeApi(first.server.url, first.apiKey!), b: makeApi(second.server.url, first.apiKey!) };
}

export function probePackageDir(version = '1.0.0', name = 'probe'): string {
  const dir = tempDir('subako-probe-');
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name, description: 'The ABI probe.', version }));
  cpSync(fixture('c', 'mcp', 'abi_probe.wasm'), join(dir, 'module.wasm'));
  return dir;
}

export function greetPackageDir(version: string): string {
  const dir = tempDir('subako-greet-');
  cpSync(join(EXAMPLES, 'greet'), dir, { recursive: true });
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'greet', description: 'Greets.', version }));
  return dir;
}

export function skillDir(name: string): string {
  const dir = tempDir('subako-skill-');
  mkdirSync(join(dir, 'refs'));
  writeFileSync(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: A test skill.\n---\nUse it well.\n`);
  writeFileSync(join(dir, 'refs', 'notes.txt'), 'notes');
  return dir;
}

export interface ChildServer extends Api {
  child: ChildProcess;
  stdout: () => string;
  /** Everything the server wrote to stderr so far. */
  stderr: () => string;
  agentId: string | null;
  exited: Promise<number | null>;
}

/**
 * Starts `subako serve` as a child process and waits for its first lines. `fdLimit` starts it under a lower
 * open-file limit (`ulimit -n`), so an attack that needs the descriptor table full stays bounded in count.
 */
export async function spawnServe(
  dataDir: string, apiKey?: string, extraArgs: string[] = [], options: { fdLimit?: number; workers?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<ChildServer> {
  const workers = options.workers === false ? [] : ['--workers', '2'];
  const argv = [process.execPath, join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--port', '0', '--data-dir', dataDir, ...workers, ...extraArgs];
  const env = { ...process.env, ...TEST_KEY, ...options.env };
  const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = options.fdLimit === undefined
    ? spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('/bin/sh', ['-c', `ulimit -n ${options.fdLimit} && exec ${quoted}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => { out += chunk; });
  child.stderr!.on('data', (chunk) => { err += chunk; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  // Started once it names its data directory, and (on a first start) once it has printed its admin key.
  while (!/^data directory: /m.test(out) || (apiKey === undefined && !/^ {2}sk_\S+$/m.test(out))) {
    if (child.exitCode !== null) throw new Error(`subako serve exited: ${err}`);
    if (Date.now() > deadline) throw new Error(`subako serve did not start: ${out} ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /serving on (\S+)/.exec(out)![1];
  const key = apiKey ?? /^ {2}(sk_\S+)$/m.exec(out)![1];
  const agentId = /\((agt_[0-9a-f]+)\)/.exec(out)?.[1] ?? null;
  return { ...makeApi(url, key), child, stdout: () => out, stderr: () => err, agentId, exited };
}
