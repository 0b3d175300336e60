/**
 * The `database` setting: from the config file, SUBAKO_DATABASE or --database, held as a Secret from the
 * moment it is read (the URL may hold a password), and never repeated in a problem.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { Secret } from '../src/common/index.js';
import { defaultServerConfig, resolveServerConfig } from '../src/config.js';
import { ValidationError } from '../src/errors.js';

const defaults = defaultServerConfig('/home/someone');
const PASSWORD = 'hunter2-never-shown';
const url = (db: string) => `postgres://subako:${PASSWORD}@db.internal:5432/${db}`;

describe('configuration: the database', () => {
  test('absent by default: the records stay in SQLite in the data directory', () => {
    assert.equal(resolveServerConfig({ defaults }).database, undefined);
  });

  test('flags over environment over the config file, each kept as a Secret that shows nothing', () => {
    const file = { path: 'subako.config.json', input: { database: url('file') } };
    const env = { SUBAKO_DATABASE: url('env') };
    const flags = { input: { database: url('flag') }, names: { database: '--database' } };
    assert.equal(resolveServerConfig({ defaults, file }).database?.reveal(), url('file'));
    assert.equal(resolveServerConfig({ defaults, file, env }).database?.reveal(), url('env'));
    const config = resolveServerConfig({ defaults, file, env, flags });
    assert.ok(config.database instanceof Secret);
    assert.equal(config.database.reveal(), url('flag'));
    for (const shown of [JSON.stringify(config), inspect(config, { depth: 5 }), String(config.database), `${config.database}`]) {
      assert.doesNotMatch(shown, new RegExp(PASSWORD));
    }
    assert.equal(resolveServerConfig({ defaults, env: { SUBAKO_DATABASE: 'postgresql://h/db' } }).database?.reveal(), 'postgresql://h/db');
  });

  test('a URL that is not PostgreSQL\'s is refused with a problem naming its source, not its value', () => {
    for (const [bad, where] of [[`mysql://u:${PASSWORD}@h/db`, 'SUBAKO_DATABASE'], [`postgres//u:${PASSWORD}@h`, 'SUBAKO_DATABASE']]) {
      assert.throws(() => resolveServerConfig({ defaults, env: { SUBAKO_DATABASE: bad } }), (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.match(err.message, new RegExp(`${where} is not valid .*postgres://`));
        assert.doesNotMatch(err.message + JSON.stringify(err.problems), new RegExp(PASSWORD));
        return true;
      });
    }
    assert.throws(() => resolveServerConfig({ defaults, file: { path: 'subako.config.json', input: { database: 5432 } } }),
      /"database" in subako.config.json is not valid/);
  });
});
