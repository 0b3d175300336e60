/**
 * A real `subako serve` child process for the hostile tests, started with the flags a test sets (small
 * limits, short timeouts) and, when asked, under a lower open-file limit (`ulimit -n`), so an attack that
 * needs the descriptor table full stays bounded in count. Plus an agent granting the ABI probe, whose `timeout`
 * tool spins until its deadline and whose `echo` tool answers at once.
 */
import { packBundle } from '../../../src/package/index.js';
import { probePackageDir, spawnServe, tempDir, type Api, type ChildServer } from '../../server/helpers/harness.js';

export interface Served extends ChildServer {
  stop(): Promise<number | null>;
}

export async function serve(flags: string[], options: { fdLimit?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Served> {
  // The workers are the test's to set (in `flags`), as are its limits.
  const served = await spawnServe(tempDir(), undefined, flags, { fdLimit: options.fdLimit, workers: false, env: options.env });
  return {
    ...served,
    async stop() {
      if (served.child.exitCode === null) served.child.kill('SIGTERM');
      return served.exited;
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
