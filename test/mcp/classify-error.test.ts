/**
 * classifyFailure on the SDK's own errors for the answers that are refusals, not broken connections: a server
 * that answers `input_required` (an input request subako cannot fulfil) and a 403 insufficient_scope.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InsufficientScopeError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { classifyFailure, keepsConnection } from '../../src/mcp/classify-error.js';
import { McpAuthError, McpServerError } from '../../src/mcp/errors.js';
import { mcp } from '../../src/mcp/index.js';

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
});
