/**
 * The authorization server's keys as the door fetches them (jwks-fetch.ts): kept, fetched again for a key it does
 * not hold (a rotation) but not more often than the cool-down, and bounded in size and time. Against a real HTTP
 * server on loopback; the cache's clock is the test's, so the cool-down and the age pass without sleeping.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { JWKS_MAX_AGE_MS, JWKS_REFETCH_COOLDOWN_MS, JWKS_TIMEOUT_MS, JwksCache, JwksError, MAX_JWKS_BYTES } from '../../src/server/jwks-fetch.js';

interface Key { privateKey: CryptoKey; jwk: JWK }
const newKey = async (kid: string): Promise<Key> => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } };
};
const sign = (key: Key): Promise<string> =>
  new SignJWT({ sub: 'ada' }).setProtectedHeader({ alg: 'ES256', kid: key.jwk.kid! }).setExpirationTime('1h').sign(key.privateKey);

let http: Server;
let base = '';
let served: Key[] = [];
let fetches = 0;
/** What /odd answers, per test. */
let odd: (res: import('node:http').ServerResponse) => void = (res) => res.end();

before(async () => {
  http = createServer((req, res) => {
    if (req.url === '/jwks') {
      fetches += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: served.map((k) => k.jwk) }));
    } else odd(res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});
after(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
});

describe('the JWK set, kept and fetched again', () => {
  it('is fetched once for many tokens, fetched again for a rotated key only past the cool-down, and again past its age', async () => {
    let now = 1_000_000;
    const first = await newKey('k1');
    served = [first];
    fetches = 0;
    const cache = new JwksCache(`${base}/jwks`, () => now);
    for (let i = 0; i < 5; i++) await jwtVerify(await sign(first), cache.getKey);
    assert.equal(fetches, 1);

    const rotated = await newKey('k2');
    served = [rotated];
    const rotatedToken = await sign(rotated);
    await assert.rejects(jwtVerify(rotatedToken, cache.getKey), /no applicable key|JWKSNoMatchingKey|matching/i, 'within the cool-down a new kid is not fetched');
    assert.equal(fetches, 1);
    now += JWKS_REFETCH_COOLDOWN_MS;
    await jwtVerify(rotatedToken, cache.getKey);
    assert.equal(fetches, 2, 'past the cool-down the set is fetched again and the new key found');
    await assert.rejects(jwtVerify(await sign(first), cache.getKey), /no applicable key|matching/i, 'the old key is gone with the set that held it');
    assert.equal(fetches, 2, 'and asking for it at once again fetches nothing (the cool-down)');

    now += JWKS_MAX_AGE_MS;
    await jwtVerify(rotatedToken, cache.getKey);
    assert.equal(fetches, 3, 'past its age the set is fetched again, even for a key it holds');
  });
});

describe('a JWK set that cannot be had is an error, never a pass', () => {
  const failing: { name: string; answer: (res: import('node:http').ServerResponse) => void; reason: string }[] = [
    { name: 'an answer larger than the cap', reason: 'too_large', answer: (res) => { res.writeHead(200); res.end(JSON.stringify({ keys: [], pad: 'x'.repeat(MAX_JWKS_BYTES) })); } },
    { name: 'a larger answer streamed without a length', reason: 'too_large', answer: (res) => { res.writeHead(200); for (let i = 0; i < 40; i++) res.write('x'.repeat(16 * 1024)); res.end(); } },
    { name: 'an answer that is not a JWK set', reason: 'not_a_jwks', answer: (res) => { res.writeHead(200); res.end('{"keys": "none"}'); } },
    { name: 'an HTTP error', reason: 'unreachable', answer: (res) => { res.writeHead(503); res.end('down'); } },
  ];
  for (const { name, answer, reason } of failing) {
    it(`${name}: ${reason}`, async () => {
      odd = answer;
      const cache = new JwksCache(`${base}/odd`);
      await assert.rejects(jwtVerify(await sign(await newKey('k')), cache.getKey), (err: unknown) => err instanceof JwksError && err.reason === reason);
    });
  }

  it(`a server that never answers: unreachable after ${JWKS_TIMEOUT_MS} ms`, async () => {
    odd = () => undefined; // holds the request open
    const started = Date.now();
    const cache = new JwksCache(`${base}/odd`);
    await assert.rejects(jwtVerify(await sign(await newKey('k')), cache.getKey), (err: unknown) => err instanceof JwksError && err.reason === 'unreachable' && /within/.test(err.message));
    assert.ok(Date.now() - started >= JWKS_TIMEOUT_MS - 100);
  });
});
