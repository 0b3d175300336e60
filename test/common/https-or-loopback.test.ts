import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isHttpsOrLoopback } from '../../src/common/index.js';

test('https anywhere, plain http only to a literal loopback host, never credentials in the URL', () => {
  for (const ok of ['https://mcp.example.com/mcp', 'http://localhost:8080/mcp', 'http://127.0.0.1/token', 'http://[::1]:9/x']) {
    assert.equal(isHttpsOrLoopback(ok), true, ok);
  }
  for (const refused of [
    'http://mcp.example.com/mcp', // plain text over the network
    'http://evil.localhost/mcp', // the resolver decides where this goes
    'http://127.0.0.1.nip.io/', // a public name that looks local
    'https://user:pass@mcp.example.com/', // credentials in the URL
    'ftp://localhost/', 'not a url', '',
  ]) {
    assert.equal(isHttpsOrLoopback(refused), false, refused);
  }
});
