/**
 * A real `subako serve` child process for the hostile tests, started with the flags a test sets (small
 * limits, short timeouts) and, when asked, under a lower open-file limit (`ulimit -n`), so an attack that
 * needs the descriptor table full stays bounded in count. Plus an agent granting the ABI probe, whose `timeout`
 * tool spins until its deadline and whose `echo` tool answers at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { packBundle } from '../../../src/package/index.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { TEST_KEY, makeApi, probePackageDir, tempDir, type Api } from '../../server/helpers/harness.js';

export interface Served extends Api {
  child: ChildProcess;
  /** Everything the server wrote to stderr so far. */
  stderr: () => string;
  stop(): Promise<number | null>;
}

export async function serve(flags: string[], options: { fdLimit?: number } = {}): Promise<Served> {
  const argv = [process.execPath, join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--port', '0', '--data-dir', tempDir(), ...flags];
  const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = options.fdLimit === undefined
    ? spawn(argv[0], argv.slice(1), { env: { ...process.env, ...TEST_KEY }, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('/bin/sh', ['-c', `ulimit -n ${options.fdLimit} && exec ${quoted}`], { env: { ...process.env, ...TEST_KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => { out += chunk; });
  child.stderr!.on('data', (chunk) => { err += chunk; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!/^ {2}(sk_\S+)$/m.test(out)) {
    if (child.exitCode !== null) throw new Error(`subako serve exited: ${err}`);
    if (Date.now() > deadline) throw new Error(`subako serve did not start: ${out} ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /serving on (\S+)/.exec(out)![1];
  const key = /^ {2}(sk_\S+)$/m.exec(out)![1];
  return {
    ...makeApi(url, key),
    child,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface ProbeSession {
  id: string;
  token: string;
  mcp: { capability_url: string; url: string; authorization: string };
}

let agents = 0;

/** Publishes the ABI probe (if it is not yet) and creates an agent granting it, with `sessions` sessions. */
export async function probeAgent(api: Api, sessions: number): Promise<{ agentId: string; sessions: ProbeSession[] }> {
  const uploaded = await api.call('POST', '/v1/packages', await packBundle(probePackageDir()));
  if (uploaded.status !== 201 && uploaded.status !== 200) throw new Error(`upload: ${uploaded.status} ${JSON.stringify(uploaded.body)}`);
  const agent = await api.call('POST', '/v1/agents', { name: `probe-agent-${++agents}`, tools: [{ package: 'probe' }] });
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
  const made: ProbeSession[] = [];
  for (let i = 0; i < sessions; i++) made.push((await api.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body);
  return { agentId: agent.body.id, sessions: made };
}
