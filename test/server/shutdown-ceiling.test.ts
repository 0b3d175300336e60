/**
 * Shutdown with a ceiling (issue 25, point 4), on a real `subako serve`: SIGTERM while a client holds a live
 * call stream open, another a request whose body never comes, and a third a call that runs to its deadline.
 * The stream ends at once; the call finishes and is answered; the request no call needs is cut after the grace;
 * the process exits 0 — it was seen, before, still running 30 s later —, and its JSON log says what it waited
 * for and what it cut.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, spawnServe, tempDir } from './helpers/harness.js';

const DEADLINE_MS = 3_000;
/** The server's own bound is the deadline plus its grace (5 s); the old wait was 30 s and more. */
const CEILING_MS = 25_000;

function within<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not happen within ${CEILING_MS} ms`)), CEILING_MS); });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

describe('SIGTERM with clients holding requests open', () => {
  it('ends the stream at once, lets the call finish, cuts what no call needs, exits within its ceiling and logs what it waited for', async () => {
    const serve = await spawnServe(tempDir(), undefined, ['--no-examples', '--call-timeout-ms', String(DEADLINE_MS)], { env: { SUBAKO_LOG_LEVEL: 'info' } });
    try {
      assert.equal((await serve.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
      const agent = (await serve.call('POST', '/v1/agents', { name: 'held', tools: [{ package: 'probe' }] })).body;
      const session = (await serve.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
      const happened: string[] = [];

      // A live call stream, read as it comes.
      const stream = await fetch(`${serve.url}/v1/calls/stream`, { headers: { authorization: `Bearer ${serve.apiKey}` } });
      assert.equal(stream.status, 200);
      let streamed = '';
      const streamEnded = (async () => {
        const decoder = new TextDecoder();
        const reader = stream.body!.getReader();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) streamed += decoder.decode(chunk.value, { stream: true });
        happened.push('stream ended');
      })().catch(() => happened.push('stream ended'));

      // An upload whose body never comes.
      const url = new URL(serve.url);
      const upload = request({ host: url.hostname, port: url.port, path: '/v1/packages', method: 'POST',
        headers: { authorization: `Bearer ${serve.apiKey}`, 'content-type': 'application/gzip', 'content-length': '100000' } });
      const uploadCut = new Promise<string>((resolve) => {
        upload.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
        upload.on('response', (res) => resolve(`answered ${res.statusCode}`));
      });
      upload.write(Buffer.alloc(10));

      // A call that runs to its deadline.
      const call = serve.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'timeout', arguments: {} })
        .then((answer) => { happened.push('call answered'); return answer; });
      // Once it is running (its record says so on the stream), the signal.
      await within('the call to start', (async () => { while (!streamed.includes('"outcome":"running"')) await new Promise((r) => setTimeout(r, 20)); })());

      serve.child.kill('SIGTERM');
      const answered = await within('the call\'s answer', call);
      await within('the stream\'s end', streamEnded);
      assert.equal(answered.status, 200);
      assert.equal(answered.body.call.crash.reason, 'timeout', 'the call ran to its own deadline: it was let finish');
      assert.match(streamed, /event: end\ndata: \{[^\n]*"shutting_down"/);
      assert.deepEqual(happened, ['stream ended', 'call answered'], 'the stream ended at once, before the call did');
      assert.equal(await within('the upload to be cut', uploadCut), 'ECONNRESET');
      assert.equal(await within('the process to exit', serve.exited), 0);

      const lines = serve.stderr().split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
      const stopping = lines.find((line) => typeof line.msg === 'string' && line.msg.startsWith('stopping:'));
      assert.ok(stopping, serve.stderr());
      assert.equal(stopping.calls_in_flight, 1);
      assert.equal(stopping.streams_ended, 1);
      assert.equal(stopping.ceiling_ms, DEADLINE_MS + 5_000);
      const stopped = lines.find((line) => typeof line.msg === 'string' && line.msg.startsWith('stopped after'));
      assert.ok(stopped, serve.stderr());
      assert.equal(stopped.calls_unfinished, 0);
      assert.equal(stopped.requests_cut, 1);
      assert.ok(!lines.some((line) => (line.level as number) >= 50), `nothing failed: ${serve.stderr()}`);
    } finally {
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
      await serve.exited;
    }
  });
});
