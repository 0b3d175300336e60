/**
 * startupErrorLine, the pure mapping behind `subako serve`'s one-line start-up errors: each names the
 * setting at fault and every way to change it. (test/server/startup-errors.test.ts runs the real command.)
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startupErrorLine } from '../../src/cli/startup-errors.js';
import { SubakoError, ValidationError } from '../../src/errors.js';

const settings = { host: '127.0.0.1', port: 80, dataDir: '/srv/subako' };
const errno = (code: string, extra: Record<string, unknown> = {}): Error => Object.assign(new Error(`${code}: something`), { code, ...extra });

describe('startupErrorLine', () => {
  it('a taken port names --port, SUBAKO_PORT and "port"', () => {
    assert.match(startupErrorLine(errno('EADDRINUSE', { syscall: 'listen' }), settings), /^port 80 on 127\.0\.0\.1 is already in use .*--port \(or SUBAKO_PORT, or "port" in subako\.config\.json\)/);
  });
  it('a port the user may not open says why and names --port', () => {
    assert.match(startupErrorLine(errno('EACCES', { syscall: 'listen' }), settings), /^this user may not listen on 127\.0\.0\.1:80 \(EACCES: ports below 1024 need privileges\); choose a port from 1024 up with --port/);
  });
  it('an address this machine does not have names --host', () => {
    assert.match(startupErrorLine(errno('EADDRNOTAVAIL', { syscall: 'listen' }), settings), /^the address 127\.0\.0\.1 is not one this machine has; set --host \(or SUBAKO_HOST/);
  });
  it('a file error inside the data directory, or SQLite failing to open its database, names --data-dir', () => {
    assert.match(startupErrorLine(errno('EACCES', { syscall: 'mkdir', path: '/srv/subako/volumes' }), settings),
      /^the data directory \/srv\/subako cannot be used \(EACCES on \/srv\/subako\/volumes\); point --data-dir \(or SUBAKO_DATA_DIR, or "dataDir"/);
    assert.match(startupErrorLine(errno('SQLITE_CANTOPEN'), settings), /^the data directory \/srv\/subako cannot be used \(its database cannot be opened \(SQLITE_CANTOPEN/);
  });
  it('a bad setting is its own message; another typed error its message; anything else points at --debug', () => {
    assert.equal(startupErrorLine(new ValidationError([{ code: 'config.port', message: '--port is "x"; it takes a whole number' }]), settings),
      'a setting is not valid: --port is "x"; it takes a whole number');
    assert.equal(startupErrorLine(new SubakoError('key_permissions', 'run chmod 600 on it'), settings), 'run chmod 600 on it');
    assert.match(startupErrorLine(new TypeError('boom'), settings), /^it failed: boom \(run again with --debug for the stack\)$/);
  });
});
