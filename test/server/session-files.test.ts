/**
 * The read-only browser of a session's /volume/tmp (GET /v1/sessions/{id}/files, /files/content): it lists
 * and reads what the session's guests wrote, shows links as links and follows none of them, cannot climb out
 * of the volume, and hands a file over as an attachment a browser will not render.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
let session: { id: string; token: string };
let other: { id: string; token: string };

before(async () => {
  s = await startInProcess();
  session = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {})).body;
  other = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {})).body;
  // What a guest could have left there: files, a directory, and links pointing out of the volume.
  const tmp = await s.server.platform.volumes.sessionTmp(session.id);
  mkdirSync(join(tmp, 'notes'));
  writeFileSync(join(tmp, 'notes', 'hello.txt'), 'hello from the guest\n');
  writeFileSync(join(tmp, 'page.html'), '<script>alert(1)</script>');
  symlinkSync('/etc', join(tmp, 'escape'));
  symlinkSync('/etc/passwd', join(tmp, 'passwd'));
  symlinkSync('notes', join(tmp, 'inside'));
});
after(() => s.close());

const list = (path: string, token = s.apiKey) => fetch(`${s.url}/v1/sessions/${session.id}/files?path=${encodeURIComponent(path)}`, { headers: { authorization: `Bearer ${token}` } });
const content = (path: string) => fetch(`${s.url}/v1/sessions/${session.id}/files/content?path=${encodeURIComponent(path)}`, { headers: { authorization: `Bearer ${s.apiKey}` } });

describe('the session file browser', () => {
  it('lists a directory by name, each link shown as a link', async () => {
    const answer = await list('');
    assert.equal(answer.status, 200);
    const body = await answer.json();
    assert.deepEqual(body.entries, [
      { name: 'escape', kind: 'link', size: 0 },
      { name: 'inside', kind: 'link', size: 0 },
      { name: 'notes', kind: 'directory', size: 0 },
      { name: 'page.html', kind: 'file', size: 25 },
      { name: 'passwd', kind: 'link', size: 0 },
    ]);
    assert.equal(body.truncated, false);
    const notes = await (await list('/volume/tmp/notes/')).json();
    assert.deepEqual(notes, { path: 'notes', entries: [{ name: 'hello.txt', kind: 'file', size: 21 }], truncated: false });
  });

  it('reads a file as an attachment of type octet-stream, under a sandboxing CSP', async () => {
    const answer = await content('page.html');
    assert.equal(answer.status, 200);
    assert.equal(await answer.text(), '<script>alert(1)</script>');
    assert.equal(answer.headers.get('content-type'), 'application/octet-stream');
    assert.equal(answer.headers.get('content-disposition'), 'attachment');
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
    assert.match(answer.headers.get('content-security-policy') ?? '', /sandbox/);
    assert.equal(await (await content('notes/hello.txt')).text(), 'hello from the guest\n');
  });

  it('follows no link, inside the volume or out of it, and never climbs above it', async () => {
    for (const [path, reason] of [['escape', 'volume.link'], ['inside', 'volume.link'], ['escape/passwd', 'volume.link_in_path'], ['..', 'volume.outside'], ['notes/../..', 'volume.outside']] as const) {
      const answer = await list(path);
      assert.equal(answer.status, 422, path);
      assert.equal((await answer.json()).error.code, reason, path);
    }
    for (const [path, reason] of [['passwd', 'volume.link'], ['escape/passwd', 'volume.link_in_path'], ['inside/hello.txt', 'volume.link_in_path'], ['../../../subako.db', 'volume.outside'], ['notes', 'volume.not_file']] as const) {
      const answer = await content(path);
      assert.equal(answer.status, 422, path);
      assert.equal((await answer.json()).error.code, reason, path);
    }
  });

  it('answers 404 for what is not there, and only to an API key or the session\'s own token', async () => {
    assert.equal((await list('nothing')).status, 404);
    assert.equal((await content('notes/nothing.txt')).status, 404);
    assert.equal((await fetch(`${s.url}/v1/sessions/ses_none/files`, { headers: { authorization: `Bearer ${s.apiKey}` } })).status, 404);
    assert.equal((await list('', session.token)).status, 200);
    assert.equal((await list('', other.token)).status, 401);
  });
});
