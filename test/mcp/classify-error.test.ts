/**
 * classifyFailure on the SDK's own errors for the answers that are refusals, not broken connections: a server
 * that answers `input_required` (an input request subako cannot fulfil) and a 403 insufficient_scope.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InsufficientScopeError, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { classifyFailure, keepsConnection } from '../../src/mcp/classify-error.js';
import { McpAuthError, McpServerError } from '../../src/mcp/errors.js';
import { Secret, mcp } from '../../src/mcp/index.js';

const context = { url: 'http://127.0.0.1:1/mcp', auth: mcp.oauth('main'), operation: 'call tool "deploy"', tool: 'deploy', secrets: [] };

describe('classifyFailure', () => {
  it('an input_required answer the client cannot fulfil is McpServerError rejected and keeps the connection', () => {
    const sdk = new SdkError(SdkErrorCode.UnsupportedResultType, "Unsupported result type 'input_required' for tools/call", {
      resultType: 'input_required',
      method: 'tools/call',
    });
    const { error, dropConnection } = classifyFailure(sdk, context);
    assert.ok(error instanceof McpServerError);
    assert.equal(error.reason, 'rejected');
    assert.match(error.message, /needs input from a person to call tool "deploy"/);
    assert.equal(dropConnection, false);
  });

  it('another unsupported result type is still a protocol error that drops the connection', () => {
    const sdk = new SdkError(SdkErrorCode.UnsupportedResultType, 'Unsupported result type', { resultType: 'mystery' });
    const { error, dropConnection } = classifyFailure(sdk, context);
    assert.ok(error instanceof McpServerError);
    assert.equal(error.reason, 'protocol');
    assert.equal(dropConnection, true);
  });

  it('insufficient_scope is McpAuthError naming the scope and the step-up command, and keeps the connection', () => {
    const sdk = new InsufficientScopeError({ requiredScope: 'tools:call admin' });
    assert.equal(keepsConnection(sdk), true);
    const { error, dropConnection } = classifyFailure(sdk, context);
    assert.ok(error instanceof McpAuthError);
    assert.equal(error.reason, 'insufficient_scope');
    assert.equal(error.scope, 'tools:call admin');
    assert.match(error.message, /subako mcp login --url http:\/\/127\.0\.0\.1:1\/mcp --name main --scope 'tools:call admin'/);
    assert.equal(dropConnection, false);
    assert.equal(keepsConnection(new Error('socket hang up')), false);
  });

  it('an answer past the cap, as our transport reports it, names the cap and what raises it, and keeps the connection', () => {
    const marked = { ...context, transportMarker: 'marker-1', maxAnswerSetting: 'the setting remoteAnswerMiB' };
    const ours = new ProtocolError(-32000, 'cut off', { answerTooLarge: 'marker-1', limitBytes: 8 * 1024 * 1024 });
    const { error, dropConnection } = classifyFailure(ours, marked);
    assert.ok(error instanceof McpServerError);
    assert.equal(error.reason, 'transport');
    assert.match(error.message, /answered the request to call tool "deploy" with more than 8 MiB \(8388608 bytes\) in one message/);
    assert.match(error.message, /raise the setting remoteAnswerMiB$/);
    assert.equal(dropConnection, false);
    // A server that sends the same shape without our marker gets no such reading: it is its own JSON-RPC error.
    const forged = new ProtocolError(-32000, 'cut off', { answerTooLarge: 'guess', limitBytes: 1 });
    assert.equal((classifyFailure(forged, marked).error as McpServerError).reason, 'rejected');
    assert.equal((classifyFailure(forged, context).error as McpServerError).reason, 'rejected');
  });

  it('repeats at most 2000 characters of a server\'s own text, after cutting out the secrets in it', () => {
    const secret = 'SECRET-TOKEN-VALUE-123';
    // The secret straddles the 2000th character: cut first, half of it would be left in the message.
    const text = `${'e'.repeat(1995)}${secret}${'z'.repeat(1_000_000)}`;
    const { error } = classifyFailure(new ProtocolError(-32603, text), { ...context, secrets: [new Secret(secret)] });
    assert.ok(error.message.length < 2200, `${error.message.length} characters`);
    assert.ok(!error.message.includes('SECRET-'), 'no part of the secret is left standing');
    assert.match(error.message, /e\[reda… \(\d+ more characters\)/);
  });
});
