/**
 * Finding 2, contained: guests never run in the server's process. Whatever still takes a sandbox process
 * down (here the kernel's way, SIGKILL, as its OOM killer would; test/sandbox/process.test.ts does it with a
 * V8 heap bomb) ends the calls it held as crashes with their own reason, `sandbox_crashed`, while the
 * server goes on answering, and a new sandbox process serves the next call.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, spawnServe, startInProcess, tempDir, type InProcess } from '../server/helpers/harness.js';

/** The sandbox processes `parentPid` started (their command line names the sandbox's entry). */
function sandboxProcesses(parentPid = process.pid): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (parent === parentPid && cmdline.includes('sandbox/process-main.js')) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

describe('a sandbox process that dies under a call', () => {
  let s: InProcess;
  let sessionId: string;
  const call = (tool: string, args: Record<string, unknown> = {}) =>
    s.call('POST', `/v1/sessions/${sessionId}/calls`, { tool, arguments: args });

  before(async () => {
    s = await startInProcess({ limits: { callTimeoutMs: 20_000 } });
    assert.equal((await s.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const agent = await s.call('POST', '/v1/agents', { name: 'crashy', tools: [{ package: 'probe' }] });
    sessionId = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
  });
  after(async () => { await s.close(); });

  test('the call is a crash with its own reason, the server keeps answering, a new sandbox serves the next call', async () => {
    const [sandbox] = sandboxProcesses();
    assert.ok(sandbox, 'guests run in a sandbox process, a child of the server');
    assert.notEqual(sandbox, process.pid);
    const spinning = call('timeout'); // the probe spins until its deadline
    // Let it start, then take its process down from outside.
    await new Promise((resolve) => setTimeout(resolve, 300));
    process.kill(sandbox, 'SIGKILL');
    const crashed = await spinning;
    assert.equal(crashed.status, 200);
    assert.equal(crashed.body.result.isError, true);
    assert.equal(crashed.body.call.outcome, 'crash');
    assert.equal(crashed.body.call.crash.reason, 'sandbox_crashed');
    assert.match(crashed.body.call.crash.message, /SIGKILL/);
    // The server never stopped: health answers, and the next call runs on a new sandbox process.
    assert.equal((await s.call('GET', '/v1/health')).status, 200);
    const next = await call('echo_request', { after: 'the crash' });
    assert.equal(next.status, 200);
    assert.notEqual(next.body.result.isError, true);
    const [replacement] = sandboxProcesses();
    assert.ok(replacement !== undefined && replacement !== sandbox, 'a new sandbox process serves');
  });
});

describe('a server killed without warning', () => {
  test('leaves no sandbox process behind: the sandbox ends when its parent is gone', async () => {
    const served = await spawnServe(tempDir());
    const [sandbox] = sandboxProcesses(served.child.pid);
    assert.ok(sandbox, 'subako serve runs its guests in a sandbox process of its own');
    served.child.kill('SIGKILL');
    await served.exited;
    const deadline = Date.now() + 10_000;
    const alive = () => {
      try {
        process.kill(sandbox, 0);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false; // it is gone
        throw error;
      }
    };
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(alive(), false, `sandbox process ${sandbox} outlived its server`);
  });
});
