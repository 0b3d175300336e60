/**
 * `/v1/health`'s report, pure: each part's status, `degraded` with one reason per missing part, and `ok` true
 * exactly when nothing is missing (what `{"ok": true}` always meant).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { healthReport } from '../../src/platform/health.js';
import type { RuntimeHealth } from '../../src/platform/package-runtime.js';

const fleet = { workers: 2, slots: 8, busy: 3, otherProtocol: 0 };
const bus = (extra: Partial<RuntimeHealth> = {}): RuntimeHealth => ({ connected: true, fleet, noWorker: null, ...extra });

describe('the health report', () => {
  it('one machine, its store answering: ok, no bus, the fleet is the server itself', () => {
    assert.deepEqual(healthReport(null, null, '1.0.0'), {
      ok: true, status: 'ok', version: '1.0.0', store: { status: 'ok' }, bus: { status: 'not_used' }, fleet: { status: 'local' }, reasons: [],
    });
  });

  it('scale-out with workers live: ok, with the fleet\'s figures', () => {
    const report = healthReport(null, bus(), '1.0.0');
    assert.equal(report.ok, true);
    assert.deepEqual(report.fleet, { status: 'ok', workers: 2, slots: 8, busy: 3 });
    assert.deepEqual(report.bus, { status: 'ok' });
  });

  it('no worker running: degraded, the fleet\'s reason is the one a call would be refused with', () => {
    const report = healthReport(null, bus({ noWorker: 'no worker is running: …', fleet: { ...fleet, workers: 0, slots: 0, busy: 0 } }), '1.0.0');
    assert.equal(report.ok, false);
    assert.equal(report.status, 'degraded');
    assert.equal(report.fleet.status, 'no_worker');
    assert.deepEqual(report.reasons, ['no worker is running: …']);
  });

  it('NATS away: the bus is unavailable, naming NATS, and the fleet unknown', () => {
    const report = healthReport(null, bus({ connected: false }), '1.0.0');
    assert.equal(report.status, 'degraded');
    assert.equal(report.bus.status, 'unavailable');
    assert.match(report.bus.reason!, /not connected to the NATS server/);
    assert.equal(report.fleet.status, 'unknown');
    assert.equal(report.reasons.length, 2);
  });

  it('the store away: degraded, saying so', () => {
    const report = healthReport('the database cannot be reached', null, '1.0.0');
    assert.equal(report.ok, false);
    assert.deepEqual(report.store, { status: 'unavailable', reason: 'the database cannot be reached' });
    assert.deepEqual(report.reasons, ['the database cannot be reached']);
  });
});
