/**
 * The README run as a newcomer runs it: a fresh `git clone` of this checkout (its HEAD commit) into a
 * scratch directory, the set-up (the README's first block), then every fenced block of "Quick start" and
 * "Writing a function package" in order, from the folders the README's own `cd`s lead to, exactly as written:
 * `subako` is the command the set-up's `npm link` put on PATH, never this checkout's bin/subako.js.
 *
 * - npm's global prefix is the scratch directory's (`npm_config_prefix`), whose bin/ is first on PATH, so
 *   `npm link` links there and nothing is written outside the scratch directory. `SUBAKO_HOME` points into it.
 * - The set-up installs from npm's cache (`npm_config_offline`): a test does not use the network; better-sqlite3's
 *   binary, which a reader's install downloads, is this checkout's, packed as released. Every block
 *   after it runs with npm's registry pointed at a loopback HTTP server that records every request: any
 *   request at all fails the test (a `subako` that needed the registry, an `npx` that looked it up).
 * - The set-up's `npm test` line is not run (this is that test); everything else in the block is.
 * - The README's ports, 7070 (`subako serve`'s default) and 8443 (the local HTTPS server), are written as the
 *   reader uses them; here they are two free ports of this run: `SUBAKO_PORT` and `SUBAKO_SERVER` (the
 *   README names them) make the server listen on the first and the commands that talk to it (`subako push`)
 *   find it there, and both numbers are replaced in the commands, files and outputs.
 * - The placeholders the README names are filled from what earlier steps printed: `<api key>` and
 *   `<agent id>` from `subako serve`'s first start, `<mcp.capability_url>` from the session's answer,
 *   `<mcp url>` from `subako dev`; any other `<placeholder>` in a command fails the test.
 *
 * The conventions the README follows so that a block can be run:
 *
 * - ```bash runs its lines in bash (`set -e`: every command must succeed), in the directory the previous
 *   blocks' `cd` left; its stdout and stderr are read together, as a terminal shows them.
 * - A ```bash block whose one command is a server (`subako serve`, `subako dev`, `openssl s_server`) is "a
 *   second terminal": it is started and left running until the end.
 * - A ```text block right after a ```bash block is what that block prints: every line must match, where `…`
 *   stands for anything within a line. After a server's block it is how the server's output starts, and the
 *   next step waits for it. ```text <server>``` later on (e.g. ```text subako dev```) is what that server
 *   prints next, and the test waits for it too.
 * - ```<lang> <path>``` (e.g. ```c src/main.c```) is a file to create, or replace, at that path.
 */
import { describe, test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { REPO_ROOT } from './helpers/paths.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
/**
 * Commands that keep running, each a terminal of its own, named as the README's ```text <name>``` blocks
 * name them; a command may follow `cd <dir> &&` and `NAME=value` settings.
 */
const SERVER = /^(?:cd \S+ && )?(?:[A-Z_]+=\S+ )*(subako serve|subako dev|openssl s_server)\b/;
/** How long a server may take to print what the README shows (a Rust project's first build is slow). */
const SERVER_WAIT_MS = 240_000;
/** The ports the README's servers listen on, as written: `subako serve`'s default, and the local HTTPS server's. */
const README_PORTS = [7070, 8443] as const;
/** A block's ceiling: the set-up's `npm ci` builds the whole project. */
const BLOCK_TIMEOUT_MS = 20 * 60_000;

type Step =
  | { kind: 'run'; code: string; expected?: string }
  | { kind: 'server'; code: string; name: string; expected?: string }
  | { kind: 'await'; server: string; expected: string }
  | { kind: 'file'; path: string; content: string };

interface Part {
  heading: string;
  steps: Step[];
}

/** The text under a `## ` heading, up to the next `## `. */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `the README has a "## ${heading}" section`);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end === -1 ? undefined : end);
}

/** The section's blocks as steps, grouped by `### ` subsection (the text before the first one is a part too). */
function parts(heading: string): Part[] {
  const text = section(heading);
  const found: Part[] = [{ heading, steps: [] }];
  const pattern = /^### (.+)$|^```(\S*)(?: (\S+(?: \S+)*))?\n([\s\S]*?)^```$/gm;
  let previous: Step | undefined;
  for (const match of text.matchAll(pattern)) {
    if (match[1] !== undefined) {
      found.push({ heading: match[1], steps: [] });
      previous = undefined;
      continue;
    }
    const [, , lang, info, body] = match;
    const steps = found[found.length - 1].steps;
    if (lang === 'bash' && info === undefined) {
      const code = body;
      const server = SERVER.exec(code.trim());
      if (server) assert.ok(!code.trim().includes('\n'), `a server's block in "${heading}" holds one command:\n${code}`);
      previous = server ? { kind: 'server', code, name: server[1] } : { kind: 'run', code };
      steps.push(previous);
    } else if (lang === 'text' && info === undefined) {
      assert.ok(previous && (previous.kind === 'run' || previous.kind === 'server') && previous.expected === undefined,
        `a text block in "${heading}" follows no bash block:\n${body}`);
      previous.expected = body;
    } else if (lang === 'text') {
      steps.push({ kind: 'await', server: info!, expected: body });
      previous = undefined;
    } else if (info !== undefined) {
      steps.push({ kind: 'file', path: info, content: body });
      previous = undefined;
    } else {
      previous = undefined; // a block to read (JSON, a type), not to run
    }
  }
  return found.filter((part) => part.steps.length > 0);
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The README's output text as a pattern: each line whole, `…` anything within a line, and a line that is
 * only `…` any number of lines. `whole`: the output is that and nothing else; otherwise it holds it.
 */
function outputPattern(expected: string, whole: boolean): RegExp {
  const lines = expected.replace(/\n$/, '').split('\n');
  const source = lines.map((line, i) => {
    const end = i === lines.length - 1 ? '' : '\\n';
    if (line === '…') return `(?:[^\\n]*\\n)*?${i === lines.length - 1 ? '[^\\n]*' : ''}`;
    return `${line.split('…').map(escape).join('[^\\n]*?')}${end}`;
  }).join('');
  return whole ? new RegExp(`^${source}\\n?$`) : new RegExp(`(?:^|\\n)${source}(?=\\n|$)`);
}

const PLACEHOLDER = /<([a-z][a-z0-9 ._-]*)>/g;

/** The README's first block: the set-up, its `npm test` line left out (this file is part of that test). */
function setUp(): string {
  const match = /^```bash\n([\s\S]*?)^```$/m.exec(README);
  assert.ok(match, 'the README starts with a bash block: the set-up');
  const lines = match[1].split('\n').filter((line) => line.trim() !== '');
  assert.ok(lines.some((line) => /^npm test\b/.test(line)), `the set-up names npm test:\n${match[1]}`);
  return lines.filter((line) => !/^npm test\b/.test(line)).join('\n');
}

/** A port nothing listens on now (the kernel's pick). */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

/** A registry that answers nothing and remembers every request: the README's commands must send none. */
class RecordingRegistry {
  readonly requests: string[] = [];
  private readonly server: Server = createHttpServer((request, response) => {
    this.requests.push(`${request.method} ${request.url}`);
    response.writeHead(503, { 'content-type': 'text/plain' }).end('subako readme test: no registry here\n');
  });

  async start(): Promise<string> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => this.server.close(() => done()));
  }
}

/**
 * better-sqlite3's binary where prebuild-install looks before downloading it (`<package>_local_prebuilds`):
 * a reader's `npm ci` downloads this file; offline, it would compile SQLite from source, which was most of
 * the set-up's nine minutes. The binary is this checkout's own, packed as its release is.
 */
function prebuiltSqlite(root: string): NodeJS.ProcessEnv {
  const from = join(REPO_ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')) as { version: string };
  const dir = join(root, 'prebuilds');
  mkdirSync(dir, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const packed = spawnSync('tar', ['czf', join(dir, name), '-C', from, 'build/Release/better_sqlite3.node'], { encoding: 'utf8' });
  assert.equal(packed.status, 0, `packing better-sqlite3's binary: ${packed.stderr}`);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

class Session {
  readonly root = realpathSync(mkdtempSync(join(tmpdir(), 'subako-readme-')));
  readonly clone = join(this.root, 'subako');
  /** npm's global prefix for this run: `npm link` links `subako` into its bin/. */
  readonly prefix = join(this.root, 'npm-prefix');
  cwd = this.clone;
  readonly values = new Map<string, string>();
  /** The README's ports, and the free ones of this run that stand for them. */
  readonly ports = new Map<number, number>();
  /** Every server started, by name; the last of a name is the one its later output blocks mean. */
  private readonly servers: { name: string; child: ChildProcess; output: string; seen: number }[] = [];
  env: NodeJS.ProcessEnv;

  constructor() {
    mkdirSync(join(this.root, 'home'));
    mkdirSync(join(this.prefix, 'bin'), { recursive: true });
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!key.startsWith('SUBAKO_') && !key.toLowerCase().startsWith('npm_') && key !== 'NODE_EXTRA_CA_CERTS') env[key] = value;
    }
    this.env = {
      ...env,
      PATH: [join(this.prefix, 'bin'), process.env.PATH].join(delimiter),
      npm_config_prefix: this.prefix,
      npm_config_update_notifier: 'false',
      SUBAKO_HOME: join(this.root, 'home'),
    };
  }

  async choosePorts(): Promise<void> {
    for (const port of README_PORTS) this.ports.set(port, await freePort());
    this.env.SUBAKO_PORT = String(this.ports.get(7070));
    this.env.SUBAKO_SERVER = `http://127.0.0.1:${this.ports.get(7070)}`;
  }

  /** The README's ports as this run's, in a command, a file or an expected output. */
  localize(text: string): string {
    return text.replace(/\b(7070|8443)\b/g, (port) => String(this.ports.get(Number(port))));
  }

  /** The code with this run's ports and every placeholder filled; nothing else changes. */
  prepare(code: string): string {
    return this.localize(code).replace(PLACEHOLDER, (whole, name: string) => {
      const value = this.values.get(name);
      assert.ok(value !== undefined, `the README uses ${whole} before any step printed it (known: ${[...this.values.keys()].join(', ') || 'none'})`);
      return value;
    });
  }

  /** Reads the values the README's placeholders stand for out of what a step printed. */
  learn(output: string): void {
    const key = /keep it:\n\s+(sk_\S+)/.exec(output);
    if (key) this.values.set('api key', key[1]);
    const agent = /A demo agent \((agt_[A-Za-z0-9]+)\)/.exec(output);
    if (agent) this.values.set('agent id', agent[1]);
    const capability = /"capability_url":"([^"]+)"/.exec(output);
    if (capability) this.values.set('mcp.capability_url', capability[1]);
    const dev = /^MCP URL[^:]*: (\S+)$/m.exec(output);
    if (dev) this.values.set('mcp url', dev[1]);
  }

  run(code: string, expected: string | undefined, where: string, env: NodeJS.ProcessEnv = this.env): string {
    const script = `set -e\ncd "${this.cwd}"\n${this.prepare(code)}\npwd > "${join(this.root, '.cwd')}"\n`;
    const run = spawnSync('bash', ['-c', `exec 2>&1\n${script}`], { env, encoding: 'utf8', timeout: BLOCK_TIMEOUT_MS, maxBuffer: 64 << 20 });
    const output = run.stdout;
    assert.equal(run.status, 0, `${where}: the block failed (exit ${run.status}${run.signal ? `, ${run.signal}` : ''}):\n${code}\n--- it printed:\n${output}`);
    this.cwd = readFileSync(join(this.root, '.cwd'), 'utf8').trim();
    this.learn(output);
    if (expected !== undefined) {
      const shown = this.localize(expected);
      assert.match(output, outputPattern(shown, true), `${where}: the block printed what the README does not show:\n${code}\n--- it printed:\n${output}\n--- the README shows:\n${shown}`);
    }
    return output;
  }

  async startServer(name: string, code: string, expected: string | undefined, where: string): Promise<void> {
    assert.ok(expected !== undefined, `${where}: the README shows nothing that ${name} prints, so nothing says when it is ready`);
    // Its own process group, so that it and what it starts end together; stderr joins stdout, as in a terminal.
    // A watcher in the group ends the group when this test process is gone (ended at its ceiling, say), so no
    // server outlives the run that started it.
    const watcher = `(while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -TERM 0) &`;
    const script = `exec 2>&1\n${watcher}\ncd "${this.cwd}"\n${this.prepare(code)}`;
    const child = spawn('bash', ['-c', script], { env: this.env, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const server = { name, child, output: '', seen: 0 };
    this.servers.push(server);
    child.stdout!.on('data', (chunk: Buffer) => (server.output += chunk.toString('utf8')));
    await this.waitFor(name, expected, where);
  }

  /** Waits until the last server of that name has printed the expected lines since what was matched before. */
  async waitFor(name: string, expected: string, where: string): Promise<void> {
    const server = this.servers.findLast((s) => s.name === name);
    assert.ok(server, `${where}: no ${name} is running`);
    const shown = this.localize(expected);
    const pattern = outputPattern(shown, false);
    const started = Date.now();
    for (;;) {
      const fresh = server.output.slice(server.seen);
      const found = pattern.exec(fresh);
      if (found) {
        server.seen += found.index + found[0].length;
        this.learn(found[0]);
        return;
      }
      const exited: boolean = server.child.exitCode !== null || server.child.signalCode !== null;
      if (exited || Date.now() - started > SERVER_WAIT_MS) {
        assert.fail(`${where}: ${name} ${exited ? 'ended' : 'did not print it in time'}\n--- the README shows:\n${shown}\n--- it printed:\n${fresh.slice(-6000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  writeFile(path: string, content: string): void {
    const target = resolve(this.cwd, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, this.localize(content));
  }

  async close(): Promise<void> {
    for (const { child } of this.servers) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const gone = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
    rmSync(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

async function runPart(session: Session, part: Part): Promise<void> {
  for (const [index, step] of part.steps.entries()) {
    const where = `"${part.heading}", step ${index + 1}`;
    if (step.kind === 'run') session.run(step.code, step.expected, where);
    else if (step.kind === 'server') await session.startServer(step.name, step.code, step.expected, where);
    else if (step.kind === 'await') await session.waitFor(step.server, step.expected, where);
    else session.writeFile(step.path, step.content);
  }
}

/** The whole README takes many minutes (a clone's install and build, then builds in each language, one cargo's). */
const SUITE_TIMEOUT_MS = 40 * 60_000;

describe('the README, run as a newcomer runs it', { timeout: SUITE_TIMEOUT_MS }, () => {
  const session = new Session();
  const registry = new RecordingRegistry();
  const sections = [...parts('Quick start'), ...parts('Writing a function package')];
  let setUpDone = false;

  before(async () => {
    // The README's commands use these beside subako; a machine without them cannot run it as written.
    const missing = ['bash', 'curl', 'git', 'openssl', 'sed'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
    assert.deepEqual(missing, [], `the README's commands need ${missing.join(', ')} (Debian: apt-get install ${missing.join(' ')})`);
    await session.choosePorts();
    const clone = spawnSync('git', ['clone', '--quiet', REPO_ROOT, session.clone], { encoding: 'utf8' });
    assert.equal(clone.status, 0, `git clone ${REPO_ROOT}: ${clone.stderr}`);
  });
  after(async () => {
    await session.close();
    await registry.close();
  }, { timeout: 60_000 });

  test('the quick start and the tutorial have blocks to run, and none runs subako through npx', () => {
    assert.ok(sections.length >= 2);
    assert.ok(sections.some((part) => part.steps.some((step) => step.kind === 'server' && step.name === 'subako dev')), 'the tutorial runs subako dev');
    for (const command of ['init', 'build', 'call', 'pack', 'push']) {
      assert.ok(sections.some((part) => part.steps.some((step) => step.kind === 'run' && new RegExp(`^subako ${command}\\b`, 'm').test(step.code))), `the tutorial runs subako ${command}`);
    }
    assert.ok(!sections.some((part) => part.steps.some((step) => 'code' in step && /\bnpx\b/.test(step.code))), 'no block runs npx');
  });

  test('the set-up, from the fresh clone, puts subako on PATH', { timeout: BLOCK_TIMEOUT_MS + 60_000 }, () => {
    const code = setUp();
    session.run(code, undefined, 'the set-up', { ...session.env, npm_config_offline: 'true', ...prebuiltSqlite(session.root) });
    const found = spawnSync('bash', ['-c', 'command -v subako'], { env: session.env, encoding: 'utf8' }).stdout.trim();
    assert.equal(found, join(session.prefix, 'bin', 'subako'), 'the set-up put subako in npm\'s global bin, first on PATH');
    assert.equal(realpathSync(found), join(session.clone, 'bin', 'subako.js'), 'that subako is the clone\'s');
    assert.equal(session.cwd, session.clone, 'the set-up leaves the reader in the clone');
    setUpDone = true;
  });

  for (const part of sections) {
    test(part.heading, { timeout: 15 * 60_000 }, async (t) => {
      if (!setUpDone) return t.skip('the set-up failed');
      if (session.env.npm_config_registry === undefined) session.env.npm_config_registry = await registry.start();
      try {
        await runPart(session, part);
      } finally {
        assert.deepEqual(registry.requests, [], `"${part.heading}" asked npm's registry (${session.env.npm_config_registry}) for something`);
      }
    });
  }
});
