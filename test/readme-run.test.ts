/**
 * The README's "Quick start" and "Writing a function package", run as a reader pastes them: every fenced
 * block in order, in one scratch directory, exactly as written. What the test may change is only this:
 *
 * - `npx subako` runs this checkout's `bin/subako.js` (the reader's `npx` finds the same file), and a line
 *   that is only `npm ci` is skipped (this checkout is installed already);
 * - the placeholders the README names are filled from what earlier steps printed: `<api key>` and
 *   `<agent id>` from `subako serve`'s first start, `<mcp.capability_url>` from the session's answer,
 *   `<mcp url>` from `subako dev`; any other `<placeholder>` in a command fails the test;
 * - the scratch directory holds a copy of `examples/` (the quick start runs "from a clone"), and
 *   `SUBAKO_HOME` points into it, so nothing is written to the real home.
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
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { REPO_ROOT } from './helpers/paths.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const SUBAKO = `"${process.execPath}" "${join(REPO_ROOT, 'bin', 'subako.js')}"`;
/**
 * Commands that keep running, each a terminal of its own, named as the README's ```text <name>``` blocks
 * name them; a command may follow `cd <dir> &&` and `NAME=value` settings.
 */
const SERVER = /^(?:cd \S+ && )?(?:[A-Z_]+=\S+ )*(?:npx )?(subako serve|subako dev|openssl s_server)\b/;
/** How long a server may take to print what the README shows (a Rust project's first build is slow). */
const SERVER_WAIT_MS = 240_000;
/** The ports the README's servers listen on, as written: `subako serve`'s default, and the local HTTPS server's. */
const README_PORTS = [7070, 8443];

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
      const code = body.split('\n').filter((line) => line.trim() !== 'npm ci').join('\n');
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

class Session {
  readonly root = mkdtempSync(join(tmpdir(), 'subako-readme-'));
  cwd = this.root;
  readonly values = new Map<string, string>();
  /** Every server started, by name; the last of a name is the one its later output blocks mean. */
  private readonly servers: { name: string; child: ChildProcess; output: string; seen: number }[] = [];
  readonly env: NodeJS.ProcessEnv;

  constructor() {
    cpSync(join(REPO_ROOT, 'examples'), join(this.root, 'examples'), { recursive: true });
    mkdirSync(join(this.root, 'home'));
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SUBAKO_') && key !== 'NODE_EXTRA_CA_CERTS') env[key] = value;
    this.env = { ...env, SUBAKO_HOME: join(this.root, 'home') };
  }

  /** The code with `npx subako` made this checkout's and every placeholder filled. */
  prepare(code: string): string {
    return code.replaceAll('npx subako', SUBAKO).replace(PLACEHOLDER, (whole, name: string) => {
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

  run(code: string, expected: string | undefined, where: string): void {
    const script = `set -e\ncd "${this.cwd}"\n${this.prepare(code)}\npwd > "${join(this.root, '.cwd')}"\n`;
    const run = spawnSync('bash', ['-c', `exec 2>&1\n${script}`], { env: this.env, encoding: 'utf8', timeout: 600_000, maxBuffer: 64 << 20 });
    const output = run.stdout;
    assert.equal(run.status, 0, `${where}: the block failed (exit ${run.status}${run.signal ? `, ${run.signal}` : ''}):\n${code}\n--- it printed:\n${output}`);
    this.cwd = readFileSync(join(this.root, '.cwd'), 'utf8').trim();
    this.learn(output);
    if (expected !== undefined) {
      assert.match(output, outputPattern(expected, true), `${where}: the block printed what the README does not show:\n${code}\n--- it printed:\n${output}\n--- the README shows:\n${expected}`);
    }
  }

  async startServer(name: string, code: string, expected: string | undefined, where: string): Promise<void> {
    assert.ok(expected !== undefined, `${where}: the README shows nothing that ${name} prints, so nothing says when it is ready`);
    // Its own process group, so that it and what it starts end together; stderr joins stdout, as in a terminal.
    // A watcher in the group ends the group when this test process is gone (killed by a timeout, say), so no
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
    const pattern = outputPattern(expected, false);
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
        assert.fail(`${where}: ${name} ${exited ? 'ended' : 'did not print it in time'}\n--- the README shows:\n${expected}\n--- it printed:\n${fresh.slice(-6000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  writeFile(path: string, content: string): void {
    const target = resolve(this.cwd, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
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
    rmSync(this.root, { recursive: true, force: true });
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

/** Nothing may listen on the README's ports, or its servers could not start as written. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolvePort(false);
    });
    socket.once('error', () => resolvePort(true));
  });
}

/**
 * One run of this file at a time on a machine: the README's servers need their ports as written. The lock
 * names its holder; another run waits for it, and takes it over when that process is gone.
 */
const LOCK = join(tmpdir(), 'subako-readme-run.lock');
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};
async function takeLock(): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = statSync(LOCK, { throwIfNoEntry: false });
    let holder = 0;
    try {
      holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8').trim() || '0');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // not written yet, or let go of meanwhile
    }
    if (!held) continue;
    const gone = holder > 0 ? !alive(holder) : Date.now() - held.mtimeMs > 60_000;
    if (gone) rmSync(LOCK, { recursive: true, force: true });
    else if (Date.now() - started > 10 * 60_000) assert.fail(`another run of the README (process ${holder}) holds ${LOCK}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The whole README takes minutes (three builds of each language, one of them cargo's); npm test's default is 2. */
const SUITE_TIMEOUT_MS = 30 * 60_000;

describe('the README, run as pasted', { timeout: SUITE_TIMEOUT_MS }, () => {
  const session = new Session();
  const sections = [...parts('Quick start'), ...parts('Writing a function package')];

  before(async () => {
    // The README's commands use these beside subako; a machine without them cannot run it as written.
    const missing = ['bash', 'curl', 'openssl', 'sed'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
    assert.deepEqual(missing, [], `the README's commands need ${missing.join(', ')} (Debian: apt-get install ${missing.join(' ')})`);
    await takeLock();
    for (const port of README_PORTS) assert.ok(await portIsFree(port), `port ${port} is in use; the README's servers need it as written`);
  }, { timeout: 11 * 60_000 });
  after(async () => {
    await session.close();
    rmSync(LOCK, { recursive: true, force: true });
  }, { timeout: 60_000 });

  test('the quick start and the tutorial have blocks to run', () => {
    assert.ok(sections.length >= 2);
    assert.ok(sections.some((part) => part.steps.some((step) => step.kind === 'server' && step.name === 'subako dev')), 'the tutorial runs subako dev');
    for (const command of ['init', 'build', 'call', 'pack', 'push']) {
      assert.ok(sections.some((part) => part.steps.some((step) => step.kind === 'run' && new RegExp(`npx subako ${command}\\b`).test(step.code))), `the tutorial runs subako ${command}`);
    }
  });

  for (const part of sections) {
    test(part.heading, { timeout: 15 * 60_000 }, () => runPart(session, part));
  }
});
