/** common/url-secrecy.ts: how a URL that may carry a credential is shown anywhere (errors, logs, records, the API). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redactUrl, redactUrlsIn } from '../../src/common/index.js';

describe('redactUrl', () => {
  it('keeps scheme, host, port and plain path segments; replaces user-info, query values, a fragment and token-like segments', () => {
    assert.equal(redactUrl('https://api.example.com/v1/mcp'), 'https://api.example.com/v1/mcp');
    assert.equal(redactUrl('https://bob:hunter2@api.example.com/mcp'), 'https://[redacted]@api.example.com/mcp');
    assert.equal(redactUrl('https://api.example.com/mcp?api_key=k3y&v=2'), 'https://api.example.com/mcp?api_key=[redacted]&v=[redacted]');
    assert.equal(redactUrl('http://127.0.0.1:7070/mcp/st_9f8e7d6c5b4a39281706f5e4d3c2b1a0#x'), 'http://127.0.0.1:7070/mcp/[redacted]#[redacted]');
    assert.equal(redactUrl('https://h.example.com/servers/Xq7pLm2ZrT9vBn4K/mcp'), 'https://h.example.com/servers/[redacted]/mcp');
  });

  it('is idempotent, and a text that is no URL is replaced whole', () => {
    const once = redactUrl('https://u:p@h.example.com/mcp/tok_a1b2c3d4e5f6g7h8?k=v');
    assert.equal(redactUrl(once), once);
    assert.equal(redactUrl('not a url tok_a1b2c3d4e5f6g7h8'), '[redacted]');
  });

  it('redactUrlsIn finds the URLs in a sentence and keeps its punctuation', () => {
    assert.equal(
      redactUrlsIn('could not list tools at http://127.0.0.1:9/mcp/tok_a1b2c3d4e5f6g7h8: fetch failed (see https://x.example.com/a?t=1).'),
      'could not list tools at http://127.0.0.1:9/mcp/[redacted]: fetch failed (see https://x.example.com/a?t=[redacted]).',
    );
  });
});
