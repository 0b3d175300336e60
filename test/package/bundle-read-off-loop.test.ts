/**
 * Reading a bundle never holds the event loop: while the real server inflates and checks a bundle that
 * unpacks to 250 MiB, it keeps answering other requests — a health check and a tool call.
 *
 * The bundle is one 250 MiB file of zeros (about 250 KiB compressed) followed by a symbolic link, which the
 * read finds only at the very end and refuses. So the upload's answer comes straight after the read, with no
 * writing in between: every request answered before it was answered while the bundle was being inflated.
 * (Before the read was streamed, the server inflated and parsed the whole archive in one synchronous step of
 * about half a second, and answered nothing until the upload's refusal had gone out.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createGzip } from 'node:zlib';
import { tarEntry } from '../platform/helpers/tar-builder.js';
import { startInProcess } from '../server/helpers/harness.js';

const MiB = 1024 * 1024;
const ZEROS_BYTES = 250 * MiB;

/** A 250 MiB file streamed through gzip a mebibyte at a time, so building it never holds 250 MiB. */
async function zeroBombEndingInALink(): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise<void>((resolve, reject) => { gzip.on('end', resolve); gzip.on('error', reject); });
  const write = async (chunk: Buffer): Promise<void> => {
    if (!gzip.write(chunk)) await new Promise((resolve) => gzip.once('drain', resolve));
  };
  await write(tarEntry('SKILL.md', '---\nname: zeros\ndescription: A great many zeros.\n---\n'));
  // The header of a 250 MiB entry: tarEntry with an empty body, its size field then set by hand.
  const header = tarEntry('zeros.bin', '').subarray(0, 512);
  header.write(`${ZEROS_BYTES.toString(8).padStart(11, '0')}\0`, 124, 12, 'ascii');
  header.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  await write(header);
  const zeros = Buffer.alloc(MiB);
  for (let written = 0; written < ZEROS_BYTES; written += MiB) await write(zeros);
  await write(tarEntry('escape', '', { type: '2', linkname: '/etc/passwd' }));
  gzip.end(Buffer.alloc(1024));
  await ended;
  return Buffer.concat(out);
}

/** POSTs with node:http so the test knows when the whole body has been handed to the socket. */
function upload(url: string, apiKey: string, body: Buffer, onBodySent: () => void): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/gzip', 'content-length': body.length },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body, onBodySent);
  });
}

test('while a bundle unpacking to 250 MiB is read, health checks and a tool call are answered', async () => {
  const archive = await zeroBombEndingInALink();
  const s = await startInProcess();
  try {
    const session = await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {});
    const greet = () => s.call('POST', `/v1/sessions/${session.body.id}/calls`, { tool: 'greet', arguments: { name: 'Ada' } });
    assert.equal((await greet()).status, 200, 'a first call warms the sandbox up');

    let uploadDone = false;
    let healthBeforeUpload = 0;
    let callBeforeUpload: boolean | null = null;
    const concurrent: Promise<void>[] = [];
    const uploaded = upload(s.url, s.apiKey, archive, () => {
      concurrent.push((async () => {
        const call = await greet();
        assert.equal(call.status, 200, JSON.stringify(call.body));
        callBeforeUpload = !uploadDone;
      })());
      concurrent.push((async () => {
        while (!uploadDone) {
          const health = await s.call('GET', '/v1/health');
          assert.equal(health.status, 200);
          if (!uploadDone) healthBeforeUpload += 1;
        }
      })());
    }).finally(() => { uploadDone = true; });

    const answer = await uploaded;
    await Promise.all(concurrent);
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.match(answer.body.error.message, /"escape" is a symbolic link/, 'the link at the end was found: the whole 250 MiB was read');
    assert.equal(callBeforeUpload, true, 'the tool call was answered while the bundle was being read');
    // Several in a row, each sent only after the last was answered: the loop turned again and again.
    assert.ok(healthBeforeUpload >= 5, `only ${healthBeforeUpload} health checks were answered during the read`);
  } finally {
    await s.close();
  }
});
