/**
 * The form of an end user's id (user-ids.ts) and which vaults a session may use (vault-access.ts): pure rules,
 * checked here on their own, case by case.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/errors.js';
import { checkUserId, isUserId, MAX_USER_ID_CHARS } from '../../src/platform/user-ids.js';
import { mayUseVault, usableVaultIds, usesAllUserVaults } from '../../src/platform/vault-access.js';

describe('a user id is 1-128 characters of A-Z a-z 0-9 . _ - @ : | + =, beginning with a letter or digit', () => {
  it('takes the ids applications and identity providers give', () => {
    for (const id of ['ada', 'A', '7', 'ada@example.com', 'auth0|6601f', 'google-oauth2|1093', 'user:42', 'a.b_c-d+e=', 'x'.repeat(MAX_USER_ID_CHARS),
      '3f2504e0-4f89-11d3-9a0c-0305e82c3301']) {
      assert.equal(isUserId(id), true, id);
      assert.equal(checkUserId(id), id);
    }
  });

  it('refuses what would not stay one path segment reading as itself', () => {
    for (const id of ['', '.', '..', '.hidden', '-flag', '_x', 'a/b', 'a\\b', 'a b', 'a\tb', 'a\nb', 'é', 'a%2Fb', 'a?b', 'a#b', 'x'.repeat(MAX_USER_ID_CHARS + 1), '\u202eada']) {
      assert.equal(isUserId(id), false, JSON.stringify(id));
      assert.throws(() => checkUserId(id), (err: unknown) => err instanceof ValidationError && err.code === 'user.id' && /beginning with a letter or digit/.test(err.message));
    }
    for (const notText of [undefined, null, 42, ['ada']]) assert.equal(isUserId(notText), false);
  });

  it('names a long id shortened in its refusal', () => {
    assert.throws(() => checkUserId(`${'a'.repeat(200)}`), (err: unknown) => err instanceof ValidationError && err.message.includes('…') && err.message.length < 300);
  });
});

describe('a user\'s vault is used only by that user\'s sessions; the operator\'s by any session that names it', () => {
  it('mayUseVault', () => {
    assert.equal(mayUseVault(null, null), true, 'the operator\'s vault, a session of no user');
    assert.equal(mayUseVault(null, 'ada'), true, 'the operator\'s vault, a user\'s session');
    assert.equal(mayUseVault('ada', 'ada'), true, 'its own user\'s');
    assert.equal(mayUseVault('bob', 'ada'), false, 'another user\'s');
    assert.equal(mayUseVault('ada', null), false, 'a session of no user');
    assert.equal(mayUseVault('Ada', 'ada'), false, 'ids match exactly');
  });

  it('usableVaultIds keeps the named vaults the session may use, in order, leaving out those gone', () => {
    const vaults = [{ id: 'v1', userId: 'ada' }, { id: 'v2', userId: null }, { id: 'v3', userId: 'bob' }];
    assert.deepEqual(usableVaultIds(['v3', 'v2', 'v1', 'gone'], vaults, 'ada'), ['v2', 'v1']);
    assert.deepEqual(usableVaultIds(['v1', 'v2', 'v3'], vaults, null), ['v2']);
    assert.deepEqual(usableVaultIds(['v1', 'v2', 'v3'], vaults, 'bob'), ['v2', 'v3']);
  });

  it('a user\'s session that named no vault takes all of its user\'s, at each call', () => {
    assert.equal(usesAllUserVaults({ userId: 'ada', vaultIds: [] }), true);
    assert.equal(usesAllUserVaults({ userId: 'ada', vaultIds: ['v1'] }), false);
    assert.equal(usesAllUserVaults({ userId: null, vaultIds: [] }), false);
  });
});
