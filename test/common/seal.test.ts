import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, chmodSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { seal, unseal, isSealed, sealingKey, keyFilePath, SealError, Secret } from '../../src/common/index.js';

const PLAIN = 'refresh-token-ABCDEFGHIJKLMNOP';

describe('sealing: AES-256-GCM under a key from the environment or a key file', () => {
  let home: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'subako-seal-'));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it('seals to one line that does not contain the value, and unseals to a Secret', () => {
    const key = randomBytes(32);
    const sealed = seal(PLAIN, { key });
    assert.ok(isSealed(sealed));
    assert.ok(!sealed.includes(PLAIN));
    assert.ok(!sealed.includes('\n'));
    const opened = unseal(sealed, { key });
    assert.ok(opened instanceof Secret);
    assert.equal(opened.reveal(), PLAIN);
    assert.notEqual(seal(PLAIN, { key }), sealed, 'a fresh IV each time');
  });

  it('a Secret can be sealed directly', () => {
    const key = randomBytes(32);
    assert.equal(unseal(seal(new Secret(PLAIN), { key }), { key }).reveal(), PLAIN);
  });

  it('a wrong key, an altered value or another context does not open', () => {
    const key = randomBytes(32);
    const sealed = seal(PLAIN, { key, context: 'github' });
    assert.throws(() => unseal(sealed, { key: randomBytes(32), context: 'github' }), (e: unknown) => e instanceof SealError && e.reason === 'tampered');
    assert.throws(() => unseal(sealed, { key, context: 'gitlab' }), (e: unknown) => e instanceof SealError && e.reason === 'tampered');
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.at(-1);
    assert.throws(() => unseal(flipped, { key, context: 'github' }), SealError);
    assert.throws(() => unseal('plain text', { key }), (e: unknown) => e instanceof SealError && e.reason === 'format');
  });

  it('SUBAKO_SECRET_KEY (base64 of 32 bytes) is the key when set; a malformed one is refused', () => {
    const key = randomBytes(32);
    assert.deepEqual(sealingKey({ SUBAKO_SECRET_KEY: key.toString('base64') }), key);
    assert.throws(() => sealingKey({ SUBAKO_SECRET_KEY: Buffer.alloc(16).toString('base64') }), (e: unknown) => e instanceof SealError && e.reason === 'bad_key');
  });

  it('without it, a key file is created under SUBAKO_HOME with mode 0600 and reused', () => {
    const env = { SUBAKO_HOME: join(home, 'fresh') };
    const key = sealingKey(env);
    const path = keyFilePath(env);
    assert.equal(path, join(home, 'fresh', 'secret.key'));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64').length, 32);
    assert.deepEqual(sealingKey(env), key);
    assert.equal(unseal(seal(PLAIN, { key: sealingKey(env) }), { key }).reveal(), PLAIN);
  });

  it('a key file readable by others is refused', () => {
    const dir = join(home, 'loose');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'secret.key');
    writeFileSync(path, randomBytes(32).toString('base64'));
    chmodSync(path, 0o644);
    assert.throws(() => sealingKey({ SUBAKO_HOME: dir }), (e: unknown) => e instanceof SealError && e.reason === 'key_permissions');
  });
});
