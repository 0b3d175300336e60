/**
 * What a person deciding a call is shown of it (platform/approval-view.ts), pure: the arguments exactly, but for the
 * session's vault secrets, hidden by value wherever they sit and located by JSON Pointer; nothing hidden for a key's
 * name; nothing cut. In an elicitation's message, characters that would not show as themselves are escaped, and a
 * call that cannot be shown whole in one gets no message at all.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  approvalMessage, MAX_ELICITATION_MESSAGE_CHARS, MAX_ELICITED_DEPTH, nestingDepth, showArguments, visibleJson,
} from '../../src/platform/calls/approval-view.js';

const SECRET = 'sk-live-0123456789abcdef';

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { bottom: 1 };
  for (let i = 1; i < levels; i += 1) value = { level: value };
  return value;
}

describe('how deep arguments nest', () => {
  it('counts objects and arrays on the deepest path; scalars add nothing', () => {
    assert.equal(nestingDepth({}, 10), 1);
    assert.equal(nestingDepth({ a: 1, b: 'x' }, 10), 1);
    assert.equal(nestingDepth({ a: [1, { b: [] }] }, 10), 4);
    assert.equal(nestingDepth(nested(40), 100), 40);
    assert.equal(nestingDepth('text', 10), 0);
  });

  it('stops past its bound, without recursing, however deep a caller nests', () => {
    const deep = JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`) as unknown;
    assert.equal(nestingDepth(deep, 256), 257);
    assert.equal(nestingDepth(nested(33), 32), 33);
  });
});

describe('the arguments an approver is shown', () => {
  it('are exact: keys that look secret keep their values, nesting and size are not cut', () => {
    const args = { bypass_review: true, passport_override: 'P<X', max_tokens: 9, password: 'p', api_key: 'k', deep: nested(40), big: 'x'.repeat(100_000) };
    assert.deepEqual(showArguments(args, [SECRET]), { arguments: args, hidden: [] });
  });

  it('hide a vault secret by value, in any string under any key, and say where', () => {
    const args = { innocent: SECRET, url: `https://x.example/?k=${SECRET}`, list: ['a', [SECRET]], 'a/b~c': SECRET, fine: 'fine' };
    assert.deepEqual(showArguments(args, [SECRET]), {
      arguments: { innocent: '[redacted]', url: 'https://x.example/?k=[redacted]', list: ['a', ['[redacted]']], 'a/b~c': '[redacted]', fine: 'fine' },
      hidden: ['/innocent', '/url', '/list/1/0', '/a~1b~0c'],
    });
  });

  it('a "[redacted]" the agent wrote itself is shown as it is, and not named as hidden', () => {
    assert.deepEqual(showArguments({ note: '[redacted]' }, [SECRET]), { arguments: { note: '[redacted]' }, hidden: [] });
  });

  it('a secret in a key is hidden too, and two keys that differ only by it stay two', () => {
    const shown = showArguments({ [`x${SECRET}`]: 1, 'x[redacted]': 2 }, [SECRET]);
    assert.deepEqual(shown, { arguments: { 'x[redacted] (2)': 1, 'x[redacted]': 2 }, hidden: ['/x[redacted] (2)'] });
  });

  it('a member named __proto__ is shown as a member (not lost as a prototype)', () => {
    const args = JSON.parse('{"__proto__": {"admin": true}, "to": "x"}') as Record<string, unknown>;
    const shown = showArguments(args, []);
    assert.equal(JSON.stringify(shown.arguments), '{"__proto__":{"admin":true},"to":"x"}');
    assert.equal(Object.getPrototypeOf(shown.arguments), Object.prototype);
  });

  it('are the JSON the tool receives: undefined members left out, as on the wire', () => {
    assert.deepEqual(showArguments({ a: undefined, b: [undefined] }, []).arguments, { b: [null] });
  });

  it('secrets shorter than 4 characters are not looked for (they would hide ordinary text)', () => {
    assert.deepEqual(showArguments({ a: 'abc abc' }, ['abc']).hidden, []);
  });
});

describe('JSON a person reads', () => {
  it('escapes what would not show as itself, and parses back to the very same value', () => {
    const value = { to: 'boss@corp.example\u202Eelpmaxe.live@', tag: 'ok\u{E0041}\u{E0042}', nbsp: 'a\u00A0b', zw: 'a\u200Bb', nul: '\u0000\u007F\u0085', emoji: 'café ☕ 😀' };
    const text = visibleJson(value);
    assert.deepEqual(JSON.parse(text), value);
    assert.match(text, /\\u202e/);
    assert.match(text, /\\udb40\\udc41\\udb40\\udc42/);
    assert.match(text, /a\\u00a0b/);
    assert.match(text, /a\\u200bb/);
    assert.match(text, /\\u007f\\u0085/);
    assert.ok(text.includes('café ☕ 😀'), 'printable text, emoji included, is left as it is');
    assert.doesNotMatch(text, /[\u202E\u200B\u00A0\u007F\u0085]|\u{E0041}/u);
  });
});

describe('an elicitation message shows the whole call, or there is none', () => {
  it('shows the arguments whole, and where a secret is hidden', () => {
    const message = approvalMessage('mail__send', { to: 'a@b.example', auth: `token ${SECRET}` }, [SECRET]);
    assert.equal(message,
      'The agent asks to call the tool mail__send with these arguments: {"to":"a@b.example","auth":"token [redacted]"}. ' +
      'A secret of the session\'s vaults is shown as [redacted] at "/auth": the tool receives the secret itself there. Approve this one call?');
  });

  it('is never clipped: past its length, there is no message', () => {
    const frame = approvalMessage('t', { s: '' }, [])!.length;
    const fits = approvalMessage('t', { s: 'y'.repeat(MAX_ELICITATION_MESSAGE_CHARS - frame) }, []);
    assert.equal(fits?.length, MAX_ELICITATION_MESSAGE_CHARS);
    assert.equal(approvalMessage('t', { s: 'y'.repeat(MAX_ELICITATION_MESSAGE_CHARS - frame + 1) }, []), null);
  });

  it('past its depth, there is no message', () => {
    assert.notEqual(approvalMessage('t', nested(MAX_ELICITED_DEPTH), []), null);
    assert.equal(approvalMessage('t', nested(MAX_ELICITED_DEPTH + 1), []), null);
  });
});
