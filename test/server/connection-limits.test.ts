/** The connection limits' defaults and small rules (the flood itself is in test/hostile/slow-header-flood). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkingIntervalMs, clientAddress, defaultConnectionLimits, defaultMaxConnections, openFileLimit } from '../../src/server/connection-limits.js';

describe('connection limits', () => {
  it('the default connection limit is half the descriptor limit, at most 4096', () => {
    assert.equal(defaultMaxConnections(20_000), 4_096);
    assert.equal(defaultMaxConnections(1_024), 512);
    assert.equal(defaultMaxConnections(null), 1_024);
    assert.ok(defaultConnectionLimits(1_024).maxConnectionsPerAddress < defaultConnectionLimits(1_024).maxConnections);
  });

  it('reads this process\'s open-file limit on Linux', () => {
    const limit = openFileLimit();
    if (process.platform === 'linux') assert.ok(limit === null || limit > 0);
  });

  it('an IPv4 client reached over IPv6 counts as its IPv4 address', () => {
    assert.equal(clientAddress('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(clientAddress('::1'), '::1');
    assert.equal(clientAddress(undefined), 'unknown');
  });

  it('connections are checked often enough to honour the shortest timeout', () => {
    assert.equal(checkingIntervalMs({ headersTimeoutMs: 10_000, requestTimeoutMs: 300_000 }), 1_000);
    assert.equal(checkingIntervalMs({ headersTimeoutMs: 1_000, requestTimeoutMs: 0 }), 250);
    assert.equal(checkingIntervalMs({ headersTimeoutMs: 100, requestTimeoutMs: 100 }), 50);
  });
});
