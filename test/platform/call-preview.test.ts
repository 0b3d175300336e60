/**
 * What the call log keeps of what the model saw (call-preview.ts): redacted blocks, at most 64 KiB of JSON in
 * all; past it the blocks that fit, the start of the text block that did not (marked `truncated`), and a last
 * block saying how much was left out.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { loggedModel } from '../../src/platform/calls/call-preview.js';
import { REDACTED } from '../../src/common/index.js';
import type { ContentBlock } from '../../src/tool.js';

const KiB = 1024;
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const text = (t: string): ContentBlock => ({ type: 'text', text: t });

describe('the call log\'s preview of a result', () => {
  it('a result under 64 KiB is kept as it is, redacted; an image as its size and digest, a small one with its bytes', () => {
    const png = Buffer.from('not really a png').toString('base64');
    const large = Buffer.alloc(16 * KiB + 1, 7);
    const kept = loggedModel([
      text('token tok_secret_1 here'),
      { type: 'image', mimeType: 'image/png', data: png },
      { type: 'image', mimeType: 'image/svg+xml', data: png },
      { type: 'image', mimeType: 'image/png', data: large.toString('base64') },
    ], ['tok_secret_1']);
    const digest = createHash('sha256').update('not really a png').digest('hex');
    assert.deepEqual(kept, [
      { type: 'text', text: `token ${REDACTED} here` },
      { type: 'image', mimeType: 'image/png', bytes: 16, sha256: digest, data: png },
      { type: 'image', mimeType: 'image/svg+xml', bytes: 16, sha256: digest },
      { type: 'image', mimeType: 'image/png', bytes: large.length, sha256: createHash('sha256').update(large).digest('hex') },
    ]);
  });

  it('a text past 64 KiB is kept as its start, marked truncated, then a note of what was left out', () => {
    const big = 'word '.repeat(200 * KiB);
    const kept = loggedModel([text(big)], []) as { type: string; text: string; truncated?: boolean }[];
    assert.ok(jsonBytes(kept) <= 64 * KiB, `${jsonBytes(kept)} bytes`);
    assert.equal(kept.length, 2);
    assert.equal(kept[0].truncated, true);
    assert.ok(big.startsWith(kept[0].text) && kept[0].text.length > 60 * KiB);
    assert.equal(kept[1].truncated, true);
    assert.match(kept[1].text, /^\[\d+ of the \d+ bytes of what the model saw were left out of the call log, which keeps 64 KiB of a result; the caller received all of it\]$/);
  });

  it('escapes count: a text of quotes and control characters still fits', () => {
    const kept = loggedModel([text('"\u0001'.repeat(100 * KiB))], []);
    assert.ok(jsonBytes(kept) <= 64 * KiB, `${jsonBytes(kept)} bytes`);
    assert.ok(((kept[0] as { text: string }).text.length) > 5 * KiB);
  });

  it('a cut never splits a character, and never leaves half of a secret: redaction comes first', () => {
    const secret = 'SECRET-VALUE-0123456789';
    const kept = loggedModel([text(`${'✓'.repeat(21_840)}${secret}${'x'.repeat(100 * KiB)}`)], [secret]);
    const start = (kept[0] as { text: string }).text;
    assert.ok(!start.includes('SECRET-') && !start.includes('\uFFFD'));
    assert.ok(jsonBytes(kept) <= 64 * KiB);
  });

  it('blocks after the cut are left out and counted; many small blocks are bounded too', () => {
    const kept = loggedModel([text('a'.repeat(40 * KiB)), { type: 'audio', mimeType: 'audio/wav', data: 'A'.repeat(40 * KiB) } as ContentBlock, text('b')], []);
    assert.deepEqual((kept as { type: string }[]).map((b) => b.type), ['text', 'text']);
    assert.equal((kept[0] as { text: string }).text.length, 40 * KiB);
    assert.match((kept[1] as { text: string }).text, /were left out of the call log/);
    const many = loggedModel(Array.from({ length: 20_000 }, () => text('tiny')), []);
    assert.ok(jsonBytes(many) <= 64 * KiB && many.length < 20_000);
  });
});
