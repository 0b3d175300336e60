import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isOriginAllowed } from '../../src/mcp/index.js';
import { originCheck } from '../../src/mcp/origin.js';

describe('the Origin check (Streamable HTTP: refuse Origins that are not allowed)', () => {
  it('allows a request without Origin (not a browser)', () => {
    assert.equal(isOriginAllowed(null), true);
    assert.equal(isOriginAllowed(undefined), true);
  });

  it('allows loopback origins on any port by default', () => {
    for (const origin of ['http://localhost:3000', 'https://localhost', 'http://127.0.0.1:8080', 'http://[::1]:5173', 'http://app.localhost']) {
      assert.equal(isOriginAllowed(origin), true, origin);
    }
  });

  it('refuses other origins, the opaque origin null, and junk', () => {
    for (const origin of ['https://evil.example', 'null', 'http://127.0.0.1.evil.example', 'file://', 'not a url', 'http://localhost.evil.example']) {
      assert.equal(isOriginAllowed(origin), false, origin);
    }
  });

  it('allows configured exact origins and can turn loopback off', () => {
    const policy = { allowedOrigins: ['https://app.example'], allowLoopbackOrigins: false };
    assert.equal(isOriginAllowed('https://app.example', policy), true);
    assert.equal(isOriginAllowed('https://app.example:444', policy), false);
    assert.equal(isOriginAllowed('http://localhost:3000', policy), false);
    assert.equal(isOriginAllowed('https://anything.example', { allowedOrigins: ['*'] }), true);
  });

  it('a check made once for a policy (configured origins normalized up front) answers each origin the same', () => {
    const check = originCheck({ allowedOrigins: ['https://app.example/', 'http://tool.example:8080'], allowLoopbackOrigins: false });
    assert.equal(check('https://app.example'), true, 'an entry with a path is compared as its origin');
    assert.equal(check(' http://tool.example:8080 '), true);
    assert.equal(check('http://tool.example'), false, 'the port is part of the origin');
    assert.equal(check('http://localhost:3000'), false);
    assert.equal(check(null), true);
    const loopbackOnly = originCheck();
    assert.equal(loopbackOnly('http://127.0.0.1:9'), true);
    assert.equal(loopbackOnly('https://evil.example'), false);
    assert.equal(loopbackOnly('null'), false);
  });
});
