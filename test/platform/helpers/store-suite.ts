/**
 * The one store suite: every Store method's contract, run against each back end by its own test file
 * (store-sqlite.test.ts, store-postgres.test.ts) with a factory for fresh databases. A back end passes when it
 * gives the same answers as the others: the same records back, the same pages and cursors, the same
 * conflicts, the same cascades.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError } from '../../../src/platform/errors.js';
import { MIGRATIONS } from '../../../src/platform/store/migrations.js';
import { newId } from '../../../src/platform/ids.js';
import type {
  AgentSpec, AgentToolGrant, ApiKeyRecord, CallRecord, CredentialRecord, Page, PageRequest, PackageRecord, SessionRecord, Store, ToolPin,
} from '../../../src/platform/store/store.js';
import type { ApprovalDecision, HeldApprovalRecord } from '../../../src/platform/store/store.js';
import type { TaskRecord } from '../../../src/platform/store/task-store.js';

export interface StoreHandle {
  store: Store;
  /** Opens the same database again (as a restarted process would). */
  reopen(): Promise<Store>;
  /** The schema version a store of this back end reports. */
  schemaVersion(store: Store): Promise<number>;
}

export interface StoreBackend {
  /** A store on a new, empty database. */
  fresh(): Promise<StoreHandle>;
  /** Runs once after the suite: removes every database `fresh` made. */
  cleanup(): Promise<void>;
}

const LATEST = MIGRATIONS[MIGRATIONS.length - 1].version;
const iso = (ms: number): string => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

const pkg = (name: string, version: string, extra: Partial<PackageRecord> = {}): Omit<PackageRecord, 'seq'> => ({
  name, version, description: 'd', digest: 'a'.repeat(64), manifest: { abi: 1 }, tools: [{ name: 't', inputSchema: { type: 'object' } }],
  createdAt: iso(0), ...extra,
});
const grant = (pkgName: string, version: string): AgentToolGrant => ({
  package: pkgName, requested: 'latest', version, egress: { allow: ['api.example.com'], grants: [] }, data: false,
});
const spec = (parts: Partial<AgentSpec> = {}): AgentSpec => ({ name: 'agent', description: '', tools: [], skills: [], mcp_servers: [], discovery: { mode: 'all', entry: [] }, ...parts });

/** Every item of a list, page by page, with the sizes of the pages it took. */
async function walk<T>(list: (page: PageRequest) => Promise<Page<T>>, limit: number): Promise<{ items: T[]; pages: number[] }> {
  const items: T[] = [];
  const pages: number[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await list({ limit, after });
    items.push(...page.items);
    pages.push(page.items.length);
    if (!page.next_cursor) return { items, pages };
    assert.ok(page.items.length === limit, 'only a full page has a cursor');
    after = page.next_cursor;
  }
}

/**
 * Opens connections for concurrent work (a pooled back end opens them lazily, and the first writer would
 * otherwise be done before the second has connected, so no race would be tried).
 */
async function warm(store: Store): Promise<void> {
  await Promise.all(Array.from({ length: 8 }, () => store.countApiKeys()));
}

/** Byte order, as SQLite compares text and as cursors assume. */
const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

export function storeSuite(title: string, backend: StoreBackend): void {
  describe(title, () => {
    const opened: Store[] = [];
    const track = (store: Store): Store => (opened.push(store), store);
    const fresh = async (): Promise<StoreHandle> => {
      const handle = await backend.fresh();
      track(handle.store);
      return { ...handle, reopen: async () => track(await handle.reopen()) };
    };
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
    });
    after(() => backend.cleanup());

    async function agentWithSession(store: Store, vaultIds: string[] = [], expiresAt = iso(3_600_000)) {
      const agentId = newId('agt');
      await store.createAgent({ id: agentId, name: 'a', currentVersion: 1, createdAt: iso(0), updatedAt: iso(0) },
        { agentId, version: 1, spec: spec(), createdAt: iso(0) });
      const session: SessionRecord = {
        id: newId('ses'), agentId, agentVersion: 1, tokenHash: newId('tok'), vaultIds, userId: null, createdAt: iso(0), expiresAt,
      };
      await store.addSession(session);
      return { agentId, session };
    }
    const call = (sessionId: string, extra: Partial<CallRecord> = {}): CallRecord => ({
      id: newId('call'), sessionId, via: 'api', tool: 't', arguments: { q: 'x' }, outcome: 'running', crash: null, model: [],
      stderrTail: '', egress: [], durationMs: null, startedAt: iso(0), ...extra,
    });

    it('runs every migration on a new database, and none twice when reopened', async () => {
      const handle = await fresh();
      assert.equal(await handle.schemaVersion(handle.store), LATEST);
      await handle.store.close();
      const again = await handle.reopen();
      assert.equal(await handle.schemaVersion(again), LATEST);
    });

    const apiKey = (extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
      id: newId('key'), name: 'admin', hash: newId('hash'), prefix: 'sk_abc', scope: 'admin', createdAt: iso(1), lastUsedAt: null,
      revokedAt: null, ...extra,
    });

    it('finds API keys by id and hash, pages and counts them, and records their last use', async () => {
      const { store } = await fresh();
      assert.equal(await store.countApiKeys(), 0);
      const keys = [apiKey(), apiKey({ scope: 'read', name: 'dash' }), apiKey({ revokedAt: iso(2) })];
      for (const key of keys) await store.addApiKey(key);
      assert.deepEqual(await store.findApiKeyByHash(keys[1].hash), keys[1]);
      assert.deepEqual(await store.getApiKey(keys[2].id), keys[2]);
      assert.equal(await store.findApiKeyByHash('nope'), null);
      assert.equal(await store.getApiKey('key_none'), null);
      assert.equal(await store.countApiKeys(), 3, 'revoked keys count');
      assert.deepEqual((await walk((page) => store.listApiKeys(page), 2)).items, keys);
      await store.touchApiKey(keys[0].id, iso(60_000));
      assert.deepEqual(await store.getApiKey(keys[0].id), { ...keys[0], lastUsedAt: iso(60_000) });
    });

    it('reads many API keys by id in one call: those that exist, revoked ones as they are', async () => {
      const { store } = await fresh();
      const keys = [apiKey(), apiKey({ scope: 'read' }), apiKey({ scope: 'read', revokedAt: iso(2) })];
      for (const key of keys) await store.addApiKey(key);
      const byId = (records: ApiKeyRecord[]) => [...records].sort((x, y) => byteOrder(x.id, y.id));
      assert.deepEqual(byId(await store.getApiKeys([keys[2].id, 'key_none', keys[0].id])), byId([keys[0], keys[2]]));
      assert.deepEqual(byId(await store.getApiKeys(keys.map((k) => k.id))), byId(keys));
      assert.deepEqual(await store.getApiKeys([]), []);
      assert.deepEqual(await store.getApiKeys(['key_none', "x' OR '1'='1"]), [], 'ids are values, never SQL');
    });

    it('revokes API keys but never the last admin key in force, even two revoked at once', async () => {
      const { store } = await fresh();
      const [a, b, reader] = [apiKey(), apiKey(), apiKey({ scope: 'read' })];
      for (const key of [a, b, reader]) await store.addApiKey(key);
      assert.equal(await store.revokeApiKey(reader.id, iso(5)), true);
      assert.equal((await store.getApiKey(reader.id))?.revokedAt, iso(5));
      assert.equal(await store.revokeApiKey(reader.id, iso(6)), true, 'revoking a revoked key changes nothing');
      assert.equal((await store.getApiKey(reader.id))?.revokedAt, iso(5));
      assert.equal(await store.revokeApiKey('key_none', iso(6)), true);
      await warm(store);
      const both = await Promise.all([store.revokeApiKey(a.id, iso(7)), store.revokeApiKey(b.id, iso(7))]);
      assert.deepEqual(both.sort(), [false, true], 'one of the last two admin keys stays');
      const left = (await Promise.all([a, b].map((k) => store.getApiKey(k.id)))).filter((k) => k?.revokedAt === null);
      assert.equal(left.length, 1);
      assert.equal(await store.revokeApiKey(left[0]!.id, iso(8)), false);
    });

    it('gives a package back exactly as it went in: JSON key order, unicode, numbers', async () => {
      const { store } = await fresh();
      const manifest = { zeta: 1, alpha: { b: [1, 2.5, -0.125, 1e21], a: null }, 'ünï': 'ç😀', empty: {}, list: [] };
      const tools = [{ name: 'z', inputSchema: { type: 'object', required: ['b', 'a'], properties: { b: {}, a: {} } } }];
      const added = await store.addPackage(pkg('p', '1.0.0', { manifest, tools }));
      assert.equal(added.seq, 1);
      const got = await store.getPackage('p', '1.0.0');
      assert.deepEqual(got, added);
      assert.equal(JSON.stringify(got?.manifest), JSON.stringify(manifest), 'key order kept');
      assert.equal(await store.getPackage('p', '2.0.0'), null);
      assert.equal(await store.latestPackage('nothing'), null);
    });

    it('keeps package versions immutable and counts "latest" by upload order', async () => {
      const { store } = await fresh();
      await store.addPackage(pkg('p', '1.0.0'));
      await store.addPackage(pkg('p', '0.9.0'));
      await assert.rejects(store.addPackage(pkg('p', '1.0.0')), (err: unknown) => err instanceof ConflictError && err.code === 'version_exists');
      assert.equal((await store.latestPackage('p'))?.version, '0.9.0');
      assert.deepEqual((await store.packageVersions('p')).map((v) => [v.version, v.seq]), [['1.0.0', 1], ['0.9.0', 2]]);
      assert.deepEqual(await store.packageVersions('none'), []);
      assert.equal('manifest' in (await store.packageVersions('p'))[0], false);
    });

    it('refuses one of two uploads of one version at once, and numbers concurrent versions of a name apart', async () => {
      const { store } = await fresh();
      await warm(store);
      const same = await Promise.allSettled([store.addPackage(pkg('p', '1.0.0')), store.addPackage(pkg('p', '1.0.0'))]);
      assert.equal(same.filter((r) => r.status === 'fulfilled').length, 1);
      const refused = same.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.ok(refused.reason instanceof ConflictError, String(refused.reason));
      const many = await Promise.all(Array.from({ length: 8 }, (_, i) => store.addPackage(pkg('p', `2.0.${i}`))));
      assert.deepEqual(many.map((p) => p.seq).sort((a, b) => a - b), [2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('numbers unversioned versions in the transaction that adds them: from the latest ordinal up, skipping numbers taken, none twice at once', async () => {
      const { store } = await fresh();
      await store.addPackage(pkg('p', '2'));
      await warm(store);
      const unversioned = { ...pkg('p', ''), version: null };
      const many = await Promise.all(Array.from({ length: 8 }, () => store.addPackage(unversioned)));
      const byNumber = (records: { version: string; seq: number }[]) => [...records].sort((a, b) => a.seq - b.seq).map((r) => [r.version, r.seq]);
      assert.deepEqual(byNumber(many), [['3', 2], ['4', 3], ['5', 4], ['6', 5], ['7', 6], ['8', 7], ['9', 8], ['10', 9]]);
      assert.deepEqual(await store.getPackage('p', '10'), many.find((r) => r.version === '10'));
      const skill = { name: 's', version: null, description: 'how', digest: 'e'.repeat(64), createdAt: iso(2) };
      const skills = await Promise.all(Array.from({ length: 8 }, () => store.addSkill(skill)));
      assert.deepEqual(byNumber(skills), [['1', 1], ['2', 2], ['3', 3], ['4', 4], ['5', 5], ['6', 6], ['7', 7], ['8', 8]]);
      assert.equal((await store.latestSkill('s'))?.version, '8');
    });

    it('pages packages by name then upload order, in byte order of names, every item once', async () => {
      const { store } = await fresh();
      const names = ['b', 'a-b', 'a_b', 'ab', 'a', 'a0', 'z9'];
      for (const [i, name] of names.entries()) {
        await store.addPackage(pkg(name, '1.0.0'));
        if (i % 2 === 0) await store.addPackage(pkg(name, '0.1.0'));
      }
      const all = await store.allPackages();
      const expected = [...all].sort((x, y) => byteOrder(x.name, y.name) || x.seq - y.seq).map((p) => `${p.name}@${p.version}`);
      assert.deepEqual(all.map((p) => `${p.name}@${p.version}`), expected);
      for (const limit of [1, 3, 4, 100]) {
        const { items } = await walk((page) => store.listPackages(page), limit);
        assert.deepEqual(items.map((p) => `${p.name}@${p.version}`), expected, `limit ${limit}`);
      }
      const first = await store.listPackages({ limit: 100 });
      assert.equal(first.next_cursor, null);
      assert.equal(first.items.length, names.length + 4);
    });

    it('deletes package versions and counts those holding a digest', async () => {
      const { store } = await fresh();
      await store.addPackage(pkg('p', '1.0.0', { digest: 'b'.repeat(64) }));
      await store.addPackage(pkg('q', '1.0.0', { digest: 'b'.repeat(64) }));
      assert.equal(await store.countPackagesWithDigest('b'.repeat(64)), 2);
      await store.deletePackage('p', '1.0.0');
      assert.equal(await store.getPackage('p', '1.0.0'), null);
      assert.equal(await store.countPackagesWithDigest('b'.repeat(64)), 1);
      assert.equal(await store.countPackagesWithDigest('c'.repeat(64)), 0);
      // The ordinal keeps counting: a new version after a delete is not "older" than one deleted.
      assert.equal((await store.addPackage(pkg('q', '2.0.0'))).seq, 2);
    });

    it('keeps skills like packages: immutable versions, latest by upload, pages, delete', async () => {
      const { store } = await fresh();
      const skill = (name: string, version: string) => ({ name, version, description: 'how', digest: 'e'.repeat(64), createdAt: iso(2) });
      const first = await store.addSkill(skill('s', '1.0.0'));
      assert.equal(first.seq, 1);
      await store.addSkill(skill('s', '0.5.0'));
      await store.addSkill(skill('r-x', '1.0.0'));
      await store.addSkill(skill('R', '1.0.0'));
      await assert.rejects(store.addSkill(skill('s', '1.0.0')), (err: unknown) => err instanceof ConflictError && err.code === 'version_exists');
      assert.deepEqual(await store.getSkill('s', '1.0.0'), first);
      assert.equal((await store.latestSkill('s'))?.version, '0.5.0');
      const { items } = await walk((page) => store.listSkills(page), 1);
      assert.deepEqual(items.map((x) => `${x.name}@${x.version}`), ['R@1.0.0', 'r-x@1.0.0', 's@1.0.0', 's@0.5.0']);
      await store.deleteSkill('s', '0.5.0');
      assert.equal((await store.latestSkill('s'))?.version, '1.0.0');
      assert.equal(await store.getSkill('s', '0.5.0'), null);
    });

    it('creates agents with their first version, publishes the next one only, and pages both', async () => {
      const { store } = await fresh();
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const id = newId('agt');
        ids.push(id);
        await store.createAgent({ id, name: `a${i}`, currentVersion: 1, createdAt: iso(i), updatedAt: iso(i) },
          { agentId: id, version: 1, spec: spec({ name: `a${i}` }), createdAt: iso(i) });
      }
      const [id] = ids;
      assert.deepEqual(await store.getAgent(id), { id, name: 'a0', currentVersion: 1, createdAt: iso(0), updatedAt: iso(0) });
      assert.equal(await store.getAgent('agt_none'), null);
      assert.deepEqual((await walk((page) => store.listAgents(page), 2)).items.map((a) => a.id), [...ids].sort(byteOrder));

      const v2 = { agentId: id, version: 2, spec: spec({ name: 'renamed', description: 'two' }), createdAt: iso(10) };
      await store.publishAgentVersion(v2);
      assert.deepEqual(await store.getAgentVersion(id, 2), v2);
      assert.deepEqual(await store.getAgent(id), { id, name: 'renamed', currentVersion: 2, createdAt: iso(0), updatedAt: iso(10) });
      await assert.rejects(store.publishAgentVersion({ ...v2, version: 4 }), ConflictError);
      await assert.rejects(store.publishAgentVersion({ ...v2, version: 2 }), ConflictError);
      await assert.rejects(store.publishAgentVersion({ ...v2, agentId: 'agt_none', version: 2 }), ConflictError);
      assert.equal(await store.getAgentVersion(id, 9), null);
      for (let v = 3; v <= 12; v += 1) await store.publishAgentVersion({ ...v2, version: v });
      const versions = await walk((page) => store.listAgentVersions(id, page), 5);
      assert.deepEqual(versions.items.map((v) => v.version), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 'number order, not text order');
      assert.deepEqual(versions.pages, [5, 5, 2]);
    });

    it('keeps the tool definitions pinned with each agent version, exactly as they went in; a refused publish pins nothing; a delete takes them', async () => {
      const { store, reopen } = await fresh();
      const id = newId('agt');
      const definition = (description: string): ToolPin['definition'] => ({
        name: 'search', title: 'Søk ✓', description, inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        annotations: { readOnlyHint: true }, icons: [{ src: 'https://example.com/i.png', sizes: ['16x16'] }],
      });
      const pin = (server: string, tool: string, description: string): ToolPin => ({ server, tool, digest: description.padEnd(64, '0'), definition: { ...definition(description), name: tool } });
      const first = [pin('docs', 'search', 'a'), pin('docs', 'get', 'b'), pin('wiki', 'search', 'c')];
      await store.createAgent({ id, name: 'a', currentVersion: 1, createdAt: iso(0), updatedAt: iso(0) }, { agentId: id, version: 1, spec: spec(), createdAt: iso(0) }, first);
      const byKey = (pins: ToolPin[]) => [...pins].sort((x, y) => byteOrder(`${x.server}/${x.tool}`, `${y.server}/${y.tool}`));
      assert.deepEqual(await store.getToolPins(id, 1), byKey(first));
      const second = [pin('docs', 'search', 'changed')];
      await store.publishAgentVersion({ agentId: id, version: 2, spec: spec(), createdAt: iso(1) }, second);
      await assert.rejects(store.publishAgentVersion({ agentId: id, version: 2, spec: spec(), createdAt: iso(2) }, [pin('x', 'y', 'z')]), ConflictError);
      const again = await reopen();
      assert.deepEqual(await again.getToolPins(id, 1), byKey(first), 'version 1 keeps its own pins');
      assert.deepEqual(await again.getToolPins(id, 2), second);
      assert.deepEqual(await again.getToolPins(id, 3), []);
      await again.publishAgentVersion({ agentId: id, version: 3, spec: spec(), createdAt: iso(3) });
      assert.deepEqual(await again.getToolPins(id, 3), [], 'a version with no pinned servers has no pins');
      await again.deleteAgent(id);
      assert.deepEqual(await again.getToolPins(id, 1), []);
      assert.deepEqual(await again.getToolPins(id, 2), []);
    });

    it('lets one of two publishers of the same next version win; the other is told to retry', async () => {
      const { store } = await fresh();
      const id = newId('agt');
      await store.createAgent({ id, name: 'a', currentVersion: 1, createdAt: iso(0), updatedAt: iso(0) },
        { agentId: id, version: 1, spec: spec(), createdAt: iso(0) });
      await warm(store);
      const results = await Promise.allSettled(['x', 'y', 'z'].map((name) =>
        store.publishAgentVersion({ agentId: id, version: 2, spec: spec({ name }), createdAt: iso(1) })));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof ConflictError, String(r.reason));
      assert.equal((await store.getAgent(id))?.currentVersion, 2);
    });

    it('knows which agent versions use a package, a skill or a vault', async () => {
      const { store } = await fresh();
      const id = newId('agt');
      const vaultId = newId('vlt');
      const first = spec({
        tools: [grant('p', '1.0.0')], skills: [{ name: 's', requested: '1.0.0', version: '1.0.0' }],
        mcp_servers: [{ name: 'm', url: 'https://mcp.example.com/', credential: { vault_id: vaultId }, default_policy: 'allow', tools: [], definitions: 'pin' }],
      });
      await store.createAgent({ id, name: 'a', currentVersion: 1, createdAt: iso(0), updatedAt: iso(0) }, { agentId: id, version: 1, spec: first, createdAt: iso(0) });
      await store.publishAgentVersion({ agentId: id, version: 2, spec: spec({ tools: [grant('p', '1.0.0'), grant('q', '2.0.0')] }), createdAt: iso(1) });
      assert.deepEqual(await store.agentVersionsUsingPackage('p', '1.0.0'), [`${id}@1`, `${id}@2`]);
      assert.deepEqual(await store.agentVersionsUsingPackage('q', '2.0.0'), [`${id}@2`]);
      assert.deepEqual(await store.agentVersionsUsingPackage('p', '9.9.9'), []);
      assert.deepEqual(await store.agentVersionsUsingSkill('s', '1.0.0'), [`${id}@1`]);
      assert.deepEqual(await store.agentVersionsUsingVault(vaultId), [`${id}@1`]);
      assert.deepEqual(await store.agentVersionsUsingVault('vlt_other'), []);
    });

    it('deletes an agent with its versions, references, sessions and their calls, and nothing of other agents', async () => {
      const { store } = await fresh();
      const doomed = await agentWithSession(store);
      const kept = await agentWithSession(store);
      await store.publishAgentVersion({ agentId: doomed.agentId, version: 2, spec: spec({ tools: [grant('p', '1.0.0')] }), createdAt: iso(1) });
      const doomedCall = call(doomed.session.id);
      const keptCall = call(kept.session.id);
      await store.addCall(doomedCall);
      await store.addCall(keptCall);
      await store.deleteAgent(doomed.agentId);
      assert.equal(await store.getAgent(doomed.agentId), null);
      assert.equal(await store.getAgentVersion(doomed.agentId, 1), null);
      assert.deepEqual(await store.agentVersionsUsingPackage('p', '1.0.0'), []);
      assert.equal(await store.getSession(doomed.session.id), null);
      assert.equal(await store.findCall(doomedCall.id), null);
      assert.ok(await store.getAgent(kept.agentId));
      assert.ok(await store.getSession(kept.session.id));
      assert.deepEqual((await store.findCall(keptCall.id))?.call, keptCall);
    });

    it('keeps vaults and their credentials: add, get, page, update, delete, and a vault delete takes its credentials', async () => {
      const { store } = await fresh();
      const vault = { id: newId('vlt'), name: 'v', userId: null, createdAt: iso(0) };
      const other = { id: newId('vlt'), name: 'w', userId: null, createdAt: iso(0) };
      await store.addVault(vault);
      await store.addVault(other);
      assert.deepEqual(await store.getVault(vault.id), vault);
      assert.equal(await store.getVault('vlt_none'), null);
      assert.deepEqual((await walk((page) => store.listVaults(page), 1)).items, [vault, other]);
      const creds: CredentialRecord[] = [];
      for (let i = 0; i < 5; i += 1) {
        const cred: CredentialRecord = {
          id: newId('cred'), vaultId: vault.id, target: `https://api${i}.example.com`, displayName: `c${i}`, scheme: 'static_bearer',
          sealed: `sealed-${i}`, expiresAt: i === 0 ? iso(99) : null, createdAt: iso(i), updatedAt: iso(i),
        };
        creds.push(cred);
        await store.addCredential(cred);
      }
      await store.addCredential({ ...creds[0], id: newId('cred'), vaultId: other.id });
      assert.deepEqual(await store.getCredential(vault.id, creds[0].id), creds[0]);
      assert.equal(await store.getCredential(other.id, creds[0].id), null, 'a credential is found only in its own vault');
      assert.deepEqual((await walk((page) => store.listCredentials(vault.id, page), 2)).items, creds);
      assert.deepEqual(await store.allCredentials(vault.id), creds);
      const updated = { ...creds[1], target: 'https://new.example.com', scheme: 'oauth' as const, sealed: 'resealed', expiresAt: iso(500), updatedAt: iso(50) };
      await store.updateCredential(updated);
      assert.deepEqual(await store.getCredential(vault.id, creds[1].id), updated);
      await store.deleteCredential(vault.id, creds[2].id);
      assert.equal((await store.allCredentials(vault.id)).length, 4);
      await store.deleteVault(vault.id);
      assert.equal(await store.getVault(vault.id), null);
      assert.deepEqual(await store.allCredentials(vault.id), []);
      assert.equal((await store.allCredentials(other.id)).length, 1);
    });

    it('finds sessions by id and token hash, pages them, lists the expired and those using a vault', async () => {
      const { store } = await fresh();
      const { agentId, session } = await agentWithSession(store, ['vlt_a', 'vlt_b'], iso(100));
      const more: SessionRecord[] = [session];
      for (let i = 0; i < 4; i += 1) {
        const rec = { ...session, id: newId('ses'), tokenHash: newId('tok'), vaultIds: i === 0 ? ['vlt_b'] : [], expiresAt: iso(1000 * (i + 1)) };
        more.push(rec);
        await store.addSession(rec);
      }
      assert.deepEqual(await store.getSession(session.id), session);
      assert.deepEqual(await store.findSessionByTokenHash(session.tokenHash), session);
      assert.equal(await store.findSessionByTokenHash('none'), null);
      assert.deepEqual((await walk((page) => store.listSessions(agentId, page), 2)).items, more);
      assert.deepEqual((await store.listSessions('agt_other', { limit: 10 })).items, []);
      assert.deepEqual((await store.expiredSessions(iso(1000))).map((x) => x.id), [more[0].id, more[1].id]);
      assert.deepEqual(await store.sessionsUsingVault('vlt_a'), [session.id]);
      assert.deepEqual((await store.sessionsUsingVault('vlt_b')).sort(), [session.id, more[1].id].sort());
      assert.deepEqual(await store.sessionsUsingVault('vlt'), [], 'a vault id matches whole, not as a prefix');
    });

    it('keeps end users: add (an id taken is user_exists), get, page by id, update; their vaults and sessions listed by user', async () => {
      const { store } = await fresh();
      const ada = { id: 'ada@example.com', displayName: 'Ada', email: 'ada@example.com', createdAt: iso(0), updatedAt: iso(0) };
      const bob = { id: 'auth0|bob', displayName: null, email: null, createdAt: iso(1), updatedAt: iso(1) };
      await store.addUser(bob);
      await store.addUser(ada);
      await assert.rejects(store.addUser({ ...ada, displayName: 'again' }), (err: unknown) => err instanceof ConflictError && err.code === 'user_exists');
      assert.deepEqual(await store.getUser('ada@example.com'), ada);
      assert.equal(await store.getUser('ADA@example.com'), null, 'ids match exactly, letter case too');
      assert.deepEqual((await walk((page) => store.listUsers(page), 1)).items, [ada, bob], 'by id, in byte order');
      const renamed = { ...ada, displayName: 'Ada L.', email: null, updatedAt: iso(5) };
      await store.updateUser(renamed);
      assert.deepEqual(await store.getUser(ada.id), renamed);

      const adaVaults = [{ id: newId('vlt'), name: 'a1', userId: ada.id, createdAt: iso(0) }, { id: newId('vlt'), name: 'a2', userId: ada.id, createdAt: iso(0) }];
      for (const v of adaVaults) assert.equal(await store.addUserVault(v), true);
      const bobVault = { id: newId('vlt'), name: 'b', userId: bob.id, createdAt: iso(0) };
      assert.equal(await store.addUserVault(bobVault), true);
      const shared = { id: newId('vlt'), name: 'shared', userId: null, createdAt: iso(0) };
      await store.addVault(shared);
      assert.equal(await store.addUserVault({ id: newId('vlt'), name: 'x', userId: 'nobody', createdAt: iso(0) }), false, 'no vault for a user that does not exist');
      assert.deepEqual(await store.getVault(adaVaults[0].id), adaVaults[0]);
      assert.deepEqual((await walk((page) => store.listUserVaults(ada.id, page), 1)).items, adaVaults);
      assert.deepEqual(await store.userVaultIds(bob.id), [bobVault.id]);
      assert.deepEqual((await store.getVaults([shared.id, bobVault.id, 'vlt_none'])).sort((x, y) => x.id.localeCompare(y.id)), [bobVault, shared].sort((x, y) => x.id.localeCompare(y.id)));

      const { session } = await agentWithSession(store);
      const adaSession = { ...session, id: newId('ses'), tokenHash: newId('tok'), userId: ada.id };
      assert.equal(await store.addUserSession(adaSession), true);
      assert.equal(await store.addUserSession({ ...adaSession, id: newId('ses'), tokenHash: newId('tok'), userId: 'nobody' }), false);
      assert.deepEqual(await store.getSession(adaSession.id), adaSession);
      assert.deepEqual((await store.listUserSessions(ada.id, { limit: 10 })).items, [adaSession]);
      assert.deepEqual((await store.listUserSessions(bob.id, { limit: 10 })).items, []);
    });

    it('deletes a user with its sessions, their calls and approvals, its vaults and their credentials, and nothing of anyone else', async () => {
      const { store } = await fresh();
      const user = (id: string) => ({ id, displayName: null, email: null, createdAt: iso(0), updatedAt: iso(0) });
      await store.addUser(user('gone'));
      await store.addUser(user('stays'));
      const { session } = await agentWithSession(store);
      const vault = (userId: string | null) => ({ id: newId('vlt'), name: 'v', userId, createdAt: iso(0) });
      const [goneVault, staysVault, shared] = [vault('gone'), vault('stays'), vault(null)];
      await store.addUserVault(goneVault);
      await store.addUserVault(staysVault);
      await store.addVault(shared);
      const credential = (vaultId: string): CredentialRecord => ({
        id: newId('cred'), vaultId, target: 'https://api.example.com', displayName: 'c', scheme: 'static_bearer', sealed: 's', expiresAt: null, createdAt: iso(0), updatedAt: iso(0),
      });
      for (const v of [goneVault, staysVault, shared]) await store.addCredential(credential(v.id));
      const sessionOf = (userId: string | null) => ({ ...session, id: newId('ses'), tokenHash: newId('tok'), userId });
      const goneSessions = [sessionOf('gone'), sessionOf('gone')];
      for (const s of goneSessions) await store.addUserSession(s);
      const staysSession = sessionOf('stays');
      await store.addUserSession(staysSession);
      const goneCall = call(goneSessions[0].id);
      const staysCall = call(staysSession.id);
      await store.addCall(goneCall);
      await store.addCall(staysCall);

      const removed = await store.deleteUser('gone');
      assert.deepEqual(removed?.sessionIds.sort(), goneSessions.map((s) => s.id).sort());
      assert.equal(await store.getUser('gone'), null);
      for (const s of goneSessions) assert.equal(await store.getSession(s.id), null);
      assert.equal(await store.findCall(goneCall.id), null);
      assert.equal(await store.getVault(goneVault.id), null);
      assert.deepEqual(await store.allCredentials(goneVault.id), []);
      assert.equal(await store.deleteUser('gone'), null, 'a second deletion finds nothing');
      assert.ok(await store.getUser('stays'));
      assert.ok(await store.getSession(staysSession.id));
      assert.ok(await store.getSession(session.id));
      assert.ok(await store.findCall(staysCall.id));
      assert.equal((await store.allCredentials(staysVault.id)).length, 1);
      assert.equal((await store.allCredentials(shared.id)).length, 1);
    });

    it('opens one session per user and agent at the door: resumed while it lives, one of many opened at once (two handles), replaced once expired, gone with its user', async () => {
      const { store, reopen } = await fresh();
      const other = await reopen();
      const user = (id: string) => ({ id, displayName: null, email: null, createdAt: iso(0), updatedAt: iso(0) });
      await store.addUser(user('ada'));
      await store.addUser(user('bob'));
      const { agentId, session } = await agentWithSession(store);
      const candidate = (userId: string, expiresAt = iso(3_600_000)): SessionRecord =>
        ({ ...session, id: newId('ses'), tokenHash: newId('tok'), userId, createdAt: iso(0), expiresAt });
      const now = iso(1_000);

      const opened = await Promise.all([store, other, store, other, store, other].map((s) => s.openUserAgentSession(candidate('ada'), now)));
      const ids = new Set(opened.map((o) => o!.session.id));
      assert.equal(ids.size, 1, 'every opening at once agrees on one session');
      assert.equal(opened.filter((o) => o!.created).length, 1, 'and exactly one of them created it');
      const adaSession = opened.find((o) => o!.created)!.session;
      assert.deepEqual(await store.getSession(adaSession.id), adaSession);
      assert.deepEqual(await store.openUserAgentSession(candidate('ada'), now), { session: adaSession, created: false }, 'resumed');

      const bobOpened = await store.openUserAgentSession(candidate('bob'), now);
      assert.equal(bobOpened?.created, true);
      assert.notEqual(bobOpened!.session.id, adaSession.id, 'another user gets another session');
      assert.equal(await store.openUserAgentSession(candidate('nobody'), now), null, 'no session for a user that does not exist');

      // Past its expiry the mapping is passed over and replaced; a deleted session is forgotten with it.
      const later = await store.openUserAgentSession(candidate('ada', iso(10_000_000)), iso(3_600_000));
      assert.equal(later?.created, true);
      assert.notEqual(later!.session.id, adaSession.id);
      await store.deleteSession(later!.session.id);
      const afterDelete = await store.openUserAgentSession(candidate('ada', iso(10_000_000)), iso(3_600_000));
      assert.equal(afterDelete?.created, true);

      assert.ok(await store.deleteUser('bob'));
      assert.equal(await store.getSession(bobOpened!.session.id), null);
      await store.addUser(user('bob'));
      const bobAgain = await store.openUserAgentSession(candidate('bob'), now);
      assert.equal(bobAgain?.created, true, 'a user deleted and made again starts afresh');
    });

    it('deletes a session with its calls only', async () => {
      const { store } = await fresh();
      const { session, agentId } = await agentWithSession(store);
      const other = { ...session, id: newId('ses'), tokenHash: newId('tok') };
      await store.addSession(other);
      const gone = call(session.id);
      const stays = call(other.id);
      await store.addCall(gone);
      await store.addCall(stays);
      await store.deleteSession(session.id);
      assert.equal(await store.getSession(session.id), null);
      assert.equal(await store.findCall(gone.id), null);
      assert.deepEqual(await store.getCall(other.id, stays.id), stays);
      assert.ok(await store.getAgent(agentId));
    });

    it('logs calls: started, finished, with their approval, crash and egress, back as they went in', async () => {
      const { store } = await fresh();
      const { session, agentId } = await agentWithSession(store);
      const started = call(session.id, { via: 'mcp', arguments: { b: 2, a: [1, { z: 'ü' }] } });
      await store.addCall(started);
      const read = await store.getCall(session.id, started.id);
      assert.deepEqual(read, started);
      assert.equal(read !== null && 'approval' in read, false, 'no approval field on a call that needed none');
      const finished: CallRecord = {
        ...started, outcome: 'crash', crash: { reason: 'trap', message: 'unreachable' }, model: [{ type: 'text', text: 'hi' }],
        stderrTail: 'boom\n', egress: [{ url: 'https://api.example.com/x?q=1', method: 'GET', status: 200, bytesIn: 10, bytesOut: 0, durationMs: 1.5 }],
        durationMs: 42, approval: { id: newId('apr'), asked: 'api', decision: 'approved', decidedBy: 'key_1', decidedAt: iso(5) },
      };
      await store.finishCall(finished);
      assert.deepEqual(await store.getCall(session.id, started.id), finished);
      assert.deepEqual(await store.findCall(started.id), { call: finished, agentId });
      assert.equal(await store.getCall('ses_other', started.id), null, 'a call is found only in its session');
      assert.equal(await store.findCall('call_none'), null);
      const pending = call(session.id, { approval: { id: newId('apr'), asked: 'elicitation', decision: 'pending', decidedBy: null, decidedAt: null } });
      await store.addCall(pending);
      const denied: CallRecord = { ...pending, outcome: 'denied', approval: { ...pending.approval!, decision: 'denied', reason: 'no', decidedAt: iso(9) } };
      await store.finishCall(denied);
      assert.deepEqual(await store.getCall(session.id, pending.id), denied);
    });

    it('pages a session\'s calls oldest first, and finds calls across sessions newest first, filtered', async () => {
      const { store } = await fresh();
      const one = await agentWithSession(store);
      const two = await agentWithSession(store);
      const calls: CallRecord[] = [];
      for (let i = 0; i < 9; i += 1) {
        const rec = call(i % 3 === 2 ? two.session.id : one.session.id, { tool: i % 2 ? 'odd' : 'even', outcome: i === 4 ? 'ok' : 'running' });
        calls.push(rec);
        await store.addCall(rec);
      }
      const ofOne = calls.filter((c) => c.sessionId === one.session.id);
      const listed = await walk((page) => store.listCalls(one.session.id, page), 2);
      assert.deepEqual(listed.items, ofOne);
      assert.deepEqual(listed.pages, [2, 2, 2]);
      const newestFirst = [...calls].reverse();
      const everything = await walk((page) => store.findCalls({}, page), 4);
      assert.deepEqual(everything.items.map((x) => x.call.id), newestFirst.map((c) => c.id));
      assert.deepEqual(everything.items.map((x) => x.agentId), newestFirst.map((c) => (c.sessionId === one.session.id ? one.agentId : two.agentId)));
      const byAgent = await walk((page) => store.findCalls({ agentId: two.agentId }, page), 1);
      assert.deepEqual(byAgent.items.map((x) => x.call.id), newestFirst.filter((c) => c.sessionId === two.session.id).map((c) => c.id));
      const narrow = await store.findCalls({ sessionId: one.session.id, tool: 'even', outcome: 'ok' }, { limit: 10 });
      assert.deepEqual(narrow.items.map((x) => x.call.id), [calls[4].id]);
      assert.equal(narrow.next_cursor, null);
      assert.deepEqual((await store.findCalls({ tool: 'nothing' }, { limit: 10 })).items, []);
    });

    it('counts a window of calls: per bucket from its start on, per tool and per agent with errors and p50/p95 by nearest rank', async () => {
      const { store } = await fresh();
      const one = await agentWithSession(store);
      const two = await agentWithSession(store);
      const minute = 60_000;
      // Before the window: counted nowhere.
      await store.addCall(call(one.session.id, { tool: 'slow', outcome: 'ok', durationMs: 5, startedAt: iso(-1) }));
      // 20 calls of `slow` in minute 0 with durations 1..20 ms; the 20th crashed. Nearest rank of 20: p50 is the 10th, p95 the 19th.
      for (let d = 1; d <= 20; d += 1) {
        await store.addCall(call(one.session.id, { tool: 'slow', outcome: d === 20 ? 'crash' : 'ok', durationMs: d, startedAt: iso(d * 100) }));
      }
      // Minute 2: `fast` from the second agent: two that ended (one a tool error, one denied) and one still running.
      await store.addCall(call(two.session.id, { tool: 'fast', outcome: 'tool_error', durationMs: 7, startedAt: iso(2 * minute + 1) }));
      await store.addCall(call(two.session.id, { tool: 'fast', outcome: 'denied', durationMs: 3, startedAt: iso(2 * minute + 2) }));
      await store.addCall(call(two.session.id, { tool: 'fast', outcome: 'running', startedAt: iso(2 * minute + 3) }));
      // Minute 2 too, a third tool that never ended: no percentiles.
      await store.addCall(call(one.session.id, { tool: 'hung', outcome: 'running', startedAt: iso(2 * minute + 4) }));

      const stats = await store.callStats({ since: iso(0), bucketChars: 16 });
      assert.deepEqual(stats.buckets, [
        { start: iso(0).slice(0, 16), calls: 20, errors: 1 },
        { start: iso(2 * minute).slice(0, 16), calls: 4, errors: 1 },
      ]);
      assert.deepEqual(stats.byTool, [
        { key: 'slow', calls: 20, errors: 1, p50Ms: 10, p95Ms: 19 },
        { key: 'fast', calls: 3, errors: 1, p50Ms: 3, p95Ms: 7 },
        { key: 'hung', calls: 1, errors: 0, p50Ms: null, p95Ms: null },
      ]);
      assert.deepEqual(stats.byAgent, [
        { key: one.agentId, calls: 21, errors: 1, p50Ms: 10, p95Ms: 19 },
        { key: two.agentId, calls: 3, errors: 1, p50Ms: 3, p95Ms: 7 },
      ]);
      const byHour = await store.callStats({ since: iso(0), bucketChars: 13 });
      assert.deepEqual(byHour.buckets, [{ start: iso(0).slice(0, 13), calls: 24, errors: 2 }]);
      assert.deepEqual(await store.callStats({ since: iso(3 * minute), bucketChars: 16 }), { buckets: [], byTool: [], byAgent: [] });
    });

    it('ends a page before its items pass maxBytes, at least one item each, the cursor going on from the last kept', async () => {
      const { store } = await fresh();
      const { session } = await agentWithSession(store);
      const sizes = [10, 300, 10, 500, 900, 10, 10, 2000, 10];
      const calls = sizes.map((kib) => call(session.id, { model: [{ type: 'text', text: 'm'.repeat(kib * 1024) }] }));
      for (const rec of calls) await store.addCall(rec);
      const maxBytes = 1024 * 1024;
      const walked = async <T>(list: (page: PageRequest) => Promise<Page<T>>): Promise<T[][]> => {
        const pages: T[][] = [];
        for (let after: string | undefined; ;) {
          const page = await list({ limit: 200, after, maxBytes });
          pages.push(page.items);
          if (!page.next_cursor) return pages;
          after = page.next_cursor;
        }
      };
      const bytes = (items: unknown[]) => items.reduce<number>((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)) + 1, 0);
      const oldest = await walked((page) => store.listCalls(session.id, page));
      assert.deepEqual(oldest.flat().map((c) => c.id), calls.map((c) => c.id), 'every call once, in order');
      assert.deepEqual(oldest.map((p) => p.length), [4, 3, 1, 1]);
      for (const page of oldest) assert.ok(page.length === 1 || bytes(page) <= maxBytes, `a page of ${bytes(page)} bytes`);
      const newest = await walked((page) => store.findCalls({ sessionId: session.id }, page));
      assert.deepEqual(newest.flat().map((x) => x.call.id), [...calls].reverse().map((c) => c.id));
      for (const page of newest) assert.ok(page.length === 1 || bytes(page) <= maxBytes);
      // Without maxBytes a page is bounded by its limit alone, as before.
      assert.equal((await store.listCalls(session.id, { limit: 200 })).items.length, calls.length);
    });

    it('marks calls left running by a process with no lease (or from before leases) as unknown, interrupted, only those, across reopening', async () => {
      const handle = await fresh();
      const { session } = await agentWithSession(handle.store);
      const running = [call(session.id), call(session.id, { instanceId: 'ins_gone' })];
      const done = call(session.id, { outcome: 'ok', durationMs: 3, instanceId: 'ins_gone' });
      for (const rec of [...running, done]) await handle.store.addCall(rec);
      await handle.store.close();
      const reopened = await handle.reopen();
      assert.equal(await reopened.interruptOrphanedCalls(), 2);
      assert.equal(await reopened.interruptOrphanedCalls(), 0);
      const calls = (await reopened.listCalls(session.id, { limit: 10 })).items;
      assert.deepEqual(calls.map((c) => [c.outcome, c.crash?.reason ?? null]), [['unknown', 'interrupted'], ['unknown', 'interrupted'], ['ok', null]]);
      assert.match(calls[0].crash!.message, /the server running the call stopped .* whether the tool ran to its end is unknown\. Check/);
      assert.deepEqual(calls[2], done);
    });

    it('of two processes on one database, marks only the running calls of the one whose lease ran out', async () => {
      const handle = await fresh();
      const other = await handle.reopen();
      const { session } = await agentWithSession(handle.store);
      await handle.store.renewInstanceLease('ins_live', 60_000);
      await other.renewInstanceLease('ins_dead', 0);
      const live = call(session.id, { instanceId: 'ins_live' });
      const dead = call(session.id, { instanceId: 'ins_dead' });
      const deadDone = call(session.id, { instanceId: 'ins_dead', outcome: 'ok', durationMs: 1 });
      for (const rec of [live, dead, deadDone]) await handle.store.addCall(rec);
      assert.deepEqual(await handle.store.getCall(session.id, live.id), live, 'the instance is kept with the call');
      // Either process may look: the answer is the same, and only the expired lease's running call is marked.
      assert.equal(await other.interruptOrphanedCalls(), 1);
      assert.equal(await handle.store.interruptOrphanedCalls(), 0);
      assert.equal((await handle.store.getCall(session.id, live.id))?.outcome, 'running');
      const marked = await handle.store.getCall(session.id, dead.id);
      assert.deepEqual(marked, { ...dead, outcome: 'unknown', crash: { reason: 'interrupted', message: marked!.crash!.message } });
      assert.deepEqual(await handle.store.getCall(session.id, deadDone.id), deadDone);
      // A process that renews in time keeps its calls; one that closes cleanly marks its own left running.
      await handle.store.renewInstanceLease('ins_live', 60_000);
      assert.equal(await other.interruptOrphanedCalls(), 0);
      assert.equal(await handle.store.releaseInstance('ins_live'), 1);
      assert.equal((await other.getCall(session.id, live.id))?.crash?.reason, 'interrupted');
      // Its lease is gone with it: a call still naming it is an orphan now.
      const late = call(session.id, { instanceId: 'ins_live' });
      await handle.store.addCall(late);
      assert.equal(await other.interruptOrphanedCalls(), 1);
    });

    it('keeps a lease\'s epoch while it is renewed in time, and gives it a new one when it is taken afresh after it lapsed', async () => {
      const handle = await fresh();
      const other = await handle.reopen();
      const first = await handle.store.renewInstanceLease('ins_a', 60_000);
      assert.match(first, /^epoch_/);
      assert.equal(await handle.store.renewInstanceLease('ins_a', 60_000), first, 'renewed in time: the same epoch');
      assert.notEqual(await handle.store.renewInstanceLease('ins_b', 60_000), first, 'each process its own');
      // Lapsed (renewed for no time at all), then taken again before anyone swept it: a new epoch.
      assert.equal(await handle.store.renewInstanceLease('ins_a', 0), first);
      const second = await handle.store.renewInstanceLease('ins_a', 60_000);
      assert.notEqual(second, first);
      // Lapsed and dropped by another process's sweep, then taken again: a new epoch again, never an old one.
      await handle.store.renewInstanceLease('ins_a', 0);
      await other.interruptOrphanedCalls();
      const third = await handle.store.renewInstanceLease('ins_a', 60_000);
      assert.ok(third !== first && third !== second, `${third} is new`);
    });

    it('writes a call\'s end fenced by the lease it began under: past a lapse it keeps the real outcome and notes the lapse and any mark', async () => {
      const handle = await fresh();
      const other = await handle.reopen();
      const { session } = await agentWithSession(handle.store);
      const ended = (rec: CallRecord): CallRecord => ({ ...rec, outcome: 'ok', model: [{ type: 'text', text: 'done' }], durationMs: 7 });
      await handle.store.renewInstanceLease('ins_live', 60_000);

      // In time: written as it came, and writing the same end again (its answer lost) changes nothing.
      const inTime = call(session.id, { instanceId: 'ins_live' });
      await handle.store.addCall(inTime);
      assert.deepEqual(await handle.store.finishCall(ended(inTime)), { status: 'written' });
      assert.deepEqual(await handle.store.finishCall(ended(inTime)), { status: 'written' });
      assert.deepEqual(await handle.store.getCall(session.id, inTime.id), ended(inTime));

      // The lease lapses mid-call, another process marks the call unknown and drops the lease, the first takes a new one.
      const marked = call(session.id, { instanceId: 'ins_live' });
      await handle.store.addCall(marked);
      await handle.store.renewInstanceLease('ins_live', 0);
      assert.equal(await other.interruptOrphanedCalls(), 1);
      assert.equal((await other.getCall(session.id, marked.id))?.outcome, 'unknown');
      await handle.store.renewInstanceLease('ins_live', 60_000);
      const fenced = await handle.store.finishCall(ended(marked));
      assert.equal(fenced.status, 'lease_lapsed');
      const lapse = fenced.status === 'lease_lapsed' ? fenced.leaseLapsed : null;
      assert.equal(lapse?.markedAs?.outcome, 'unknown');
      assert.equal(lapse?.markedAs?.crash?.reason, 'interrupted');
      assert.match(lapse!.note, /lapsed while it ran .* marked the call unknown meanwhile\. This record holds the outcome the call really had/);
      assert.deepEqual(await other.getCall(session.id, marked.id), { ...ended(marked), leaseLapsed: lapse! }, 'the real outcome, with the lapse noted');
      // Its answer lost, written again: the record stays as it is.
      assert.deepEqual(await handle.store.finishCall(ended(marked)), { status: 'written' });
      assert.deepEqual((await other.getCall(session.id, marked.id))?.leaseLapsed, lapse!);

      // The lease lapses mid-call and is taken afresh before anyone marked the call: the lapse is noted, no mark.
      const unmarked = call(session.id, { instanceId: 'ins_live' });
      await handle.store.addCall(unmarked);
      await handle.store.renewInstanceLease('ins_live', 0);
      await handle.store.renewInstanceLease('ins_live', 60_000);
      const noted = await handle.store.finishCall(ended(unmarked));
      assert.equal(noted.status, 'lease_lapsed');
      assert.equal(noted.status === 'lease_lapsed' ? noted.leaseLapsed.markedAs : undefined, null);
      assert.equal((await other.getCall(session.id, unmarked.id))?.outcome, 'ok');

      // A call whose session was deleted meanwhile has nowhere to go.
      const gone = call(session.id, { instanceId: 'ins_live' });
      await handle.store.addCall(gone);
      await handle.store.deleteSession(session.id);
      assert.deepEqual(await handle.store.finishCall(ended(gone)), { status: 'gone' });
    });

    it('records a quick call once, as it ended: whole, with its worker; again changes nothing; over a running record it is an end; gone with its session', async () => {
      const handle = await fresh();
      const { session, agentId } = await agentWithSession(handle.store);
      await handle.store.renewInstanceLease('ins_quick', 60_000);
      const ended = (rec: CallRecord): CallRecord => ({
        ...rec, outcome: 'tool_error', model: [{ type: 'text', text: 'no' }], stderrTail: 'why\n', durationMs: 3, worker: { id: 'w-1', host: 'box-1' },
        crash: null, egress: [{ url: 'https://api.example.com/', method: 'GET', status: 404, bytesIn: 1, bytesOut: 0, durationMs: 1 }],
      });

      const quick = ended(call(session.id, { via: 'mcp', instanceId: 'ins_quick', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }));
      assert.deepEqual(await handle.store.recordEndedCall(quick), { status: 'written' });
      assert.deepEqual(await handle.store.getCall(session.id, quick.id), quick, 'every field as it went in, the worker among them');
      assert.deepEqual(await handle.store.findCall(quick.id), { call: quick, agentId });
      // Its answer lost, written again: one record, as it was.
      assert.deepEqual(await handle.store.recordEndedCall(quick), { status: 'written' });
      assert.equal((await handle.store.listCalls(session.id, { limit: 10 })).items.filter((c) => c.id === quick.id).length, 1);

      // A `running` record of it exists (its write's answer was lost): the end is written over it, fenced as ends are.
      const started = call(session.id, { instanceId: 'ins_quick' });
      await handle.store.addCall(started);
      assert.deepEqual(await handle.store.recordEndedCall(ended(started)), { status: 'written' });
      assert.deepEqual(await handle.store.getCall(session.id, started.id), ended(started));

      // Its session deleted meanwhile: nothing is written.
      const other = await agentWithSession(handle.store);
      const orphan = ended(call(other.session.id));
      await handle.store.deleteSession(other.session.id);
      assert.deepEqual(await handle.store.recordEndedCall(orphan), { status: 'gone' });
      assert.equal(await handle.store.findCall(orphan.id), null);
    });

    it('binds an idempotency key to one call: one claim of many wins, it is settled or released, taken over when expired or never recorded', async () => {
      const { store } = await fresh();
      await warm(store);
      const { session } = await agentWithSession(store);
      const other = await agentWithSession(store);
      const binding = (callId: string, at = 0, sessionId = session.id) => ({
        sessionId, key: 'k-1', requestHash: 'h1', callId, createdAt: iso(at), expiresAt: iso(at + 60_000),
      });
      const ids = Array.from({ length: 6 }, () => newId('call'));
      const claims = await Promise.all(ids.map((id) => store.claimCallKey(binding(id), iso(0))));
      assert.equal(claims.filter(Boolean).length, 1, 'of claims at once, exactly one wins');
      const winner = ids[claims.indexOf(true)];
      assert.deepEqual(await store.getCallKey(session.id, 'k-1'), { ...binding(winner), result: null });
      assert.equal(await store.claimCallKey(binding(newId('call'), 100_000, other.session.id), iso(0)), true, 'a key is one session\'s');
      assert.equal(await store.claimCallKey(binding(newId('call'), 0, 'ses_gone'), iso(0)), false, 'a session that is not there binds none');
      assert.equal(await store.getCallKey('ses_gone', 'k-1'), null);

      // Settled: the result is kept (as given: the platform seals it).
      await store.settleCallKey(session.id, 'k-1', 'call_other', 'not its call');
      assert.equal((await store.getCallKey(session.id, 'k-1'))?.result, null, 'only the bound call settles the key');
      await store.settleCallKey(session.id, 'k-1', winner, 'sealed-result');
      assert.equal((await store.getCallKey(session.id, 'k-1'))?.result, 'sealed-result');
      assert.equal(await store.takeOverCallKey(session.id, 'k-1', winner, binding(newId('call'))), false, 'a settled key is never taken over');

      // Expired: the next claim takes it over, afresh.
      const later = newId('call');
      assert.equal(await store.claimCallKey(binding(later, 60_000), iso(60_000)), true);
      assert.deepEqual(await store.getCallKey(session.id, 'k-1'), { ...binding(later, 60_000), result: null });

      // Released: free at once.
      await store.releaseCallKey(session.id, 'k-1', 'call_other');
      assert.ok(await store.getCallKey(session.id, 'k-1'), 'only the bound call releases the key');
      await store.releaseCallKey(session.id, 'k-1', later);
      assert.equal(await store.getCallKey(session.id, 'k-1'), null);

      // A claim whose call was never recorded may be taken over; one whose call was recorded may not.
      const unrecorded = newId('call');
      await store.claimCallKey(binding(unrecorded), iso(0));
      const taker = newId('call');
      assert.equal(await store.takeOverCallKey(session.id, 'k-1', unrecorded, binding(taker, 5)), true);
      assert.equal((await store.getCallKey(session.id, 'k-1'))?.callId, taker);
      await store.addCall(call(session.id, { id: taker }));
      assert.equal(await store.takeOverCallKey(session.id, 'k-1', taker, binding(newId('call'))), false);

      // Pruned once expired; gone with their session.
      await store.pruneCallKeys(iso(60_004));
      assert.ok(await store.getCallKey(session.id, 'k-1'), 'not yet expired');
      await store.pruneCallKeys(iso(60_005));
      assert.equal(await store.getCallKey(session.id, 'k-1'), null);
      assert.ok(await store.getCallKey(other.session.id, 'k-1'));
      await store.deleteSession(other.session.id);
      assert.equal(await store.getCallKey(other.session.id, 'k-1'), null);
    });

    it('keeps the first value of a setting whoever claims it after, across reopening', async () => {
      const handle = await fresh();
      const other = await handle.reopen();
      const [a, b] = await Promise.all([handle.store.claimSetting('check', 'first'), other.claimSetting('check', 'second')]);
      assert.equal(a, b, 'two claims at once agree on one value');
      assert.equal(await handle.store.claimSetting('check', 'third'), a);
      assert.equal(await handle.store.claimSetting('another', 'x'), 'x');
      await handle.store.close();
      assert.equal(await (await handle.reopen()).claimSetting('check', 'fourth'), a);
    });

    it('runs exclusive work of one name one at a time across two stores on one database, and answers what the work answers', async () => {
      const handle = await fresh();
      const other = await handle.reopen();
      await warm(handle.store);
      await warm(other);
      const log: string[] = [];
      const work = (who: string) => async () => {
        log.push(`${who} in`);
        await new Promise((r) => setTimeout(r, 50));
        log.push(`${who} out`);
        return who;
      };
      const answers = await Promise.all([handle.store.exclusively('first start', work('a')), other.exclusively('first start', work('b'))]);
      assert.deepEqual(answers, ['a', 'b']);
      assert.ok(
        JSON.stringify(log) === JSON.stringify(['a in', 'a out', 'b in', 'b out']) || JSON.stringify(log) === JSON.stringify(['b in', 'b out', 'a in', 'a out']),
        `one after the other: ${log.join(', ')}`,
      );
      // Work that throws lets the next one in, and its error is the caller's.
      await assert.rejects(handle.store.exclusively('first start', async () => { throw new Error('boom'); }), /boom/);
      assert.equal(await other.exclusively('first start', async () => 'after'), 'after');
    });

    it('keeps idempotency records, replaces one on a second put, and prunes only the older ones', async () => {
      const { store } = await fresh();
      assert.equal(await store.getIdempotent('k1'), null);
      const rec = { scope: 'k1', requestHash: 'r1', status: 201, body: { id: 'x', nested: { b: 1, a: 2 } }, createdAt: iso(10) };
      await store.putIdempotent(rec);
      assert.deepEqual(await store.getIdempotent('k1'), rec);
      const replaced = { ...rec, requestHash: 'r2', status: 200, body: null, createdAt: iso(30) };
      await store.putIdempotent(replaced);
      assert.deepEqual(await store.getIdempotent('k1'), replaced);
      await store.putIdempotent({ ...rec, scope: 'k2', createdAt: iso(10) });
      await store.putIdempotent({ ...rec, scope: 'k3', createdAt: iso(20) });
      await store.pruneIdempotent(iso(20));
      assert.equal(await store.getIdempotent('k2'), null);
      assert.ok(await store.getIdempotent('k3'), 'created exactly at the bound: kept');
      assert.ok(await store.getIdempotent('k1'));
    });

    it('keeps every record across closing and reopening', async () => {
      const handle = await fresh();
      const { session } = await agentWithSession(handle.store);
      const rec = call(session.id, { outcome: 'ok' });
      await handle.store.addCall(rec);
      const added = await handle.store.addPackage(pkg('p', '1.0.0'));
      await handle.store.close();
      await handle.store.close(); // a second close is harmless
      const reopened = await handle.reopen();
      assert.deepEqual(await reopened.getSession(session.id), session);
      assert.deepEqual(await reopened.getCall(session.id, rec.id), rec);
      assert.deepEqual(await reopened.getPackage('p', '1.0.0'), added);
    });

    // ---- approvals, shared by the replicas
    const held = (sessionId: string, extra: Partial<HeldApprovalRecord> = {}): HeldApprovalRecord => ({
      id: newId('apr'), sessionId, callId: newId('call'), tool: 'files__delete',
      arguments: { path: '/x', nested: { b: 1, a: 'ü', list: [1, null, '[redacted]'] }, api_key: 'shown as it is', ['__proto__']: { own: true } },
      hiddenSecrets: ['/nested/list/2'], createdAt: iso(0), expiresAt: iso(60_000), holder: 'inst_a', decision: null, decidedBy: null, decidedAt: null, reason: null, ...extra,
    });
    const approve = (at: number): ApprovalDecision => ({ decision: 'approved', decidedBy: 'key_1', decidedAt: iso(at), reason: null });
    /** Holds an approval as the platform does: the approval, then its call's `running` record. */
    const hold = async (store: Store, rec: HeldApprovalRecord, max = 16, now = iso(0)): Promise<boolean> => {
      const held = await store.holdApproval(rec, max, now);
      if (held) await store.addCall(call(rec.sessionId, { id: rec.callId, approval: { id: rec.id, asked: 'api', decision: 'pending', decidedBy: null, decidedAt: null } }));
      return held;
    };

    it('holds approvals up to a bound per session, and lists the pending ones not past their expiry, oldest first', async () => {
      const { store } = await fresh();
      const { session } = await agentWithSession(store);
      const other = await agentWithSession(store);
      const first = held(session.id);
      assert.equal(await hold(store, first, 2), true);
      assert.deepEqual(await store.getApproval(first.id), first, 'back as it went in');
      const stale = held(session.id, { expiresAt: iso(10) });
      assert.equal(await hold(store, stale, 2), true);
      assert.equal(await hold(store, held(session.id), 2), false, 'the session holds two pending');
      assert.equal(await store.holdApproval(held('ses_gone'), 2, iso(0)), false, 'a session deleted meanwhile holds nothing (and no foreign-key error)');
      assert.equal(await hold(store, held(session.id), 2, iso(20)), true, 'one of them is past its expiry: it no longer counts');
      const theirs = held(other.session.id);
      assert.equal(await hold(store, theirs, 2, iso(20)), true, 'the bound is per session');
      const pending = (await store.pendingApprovals(iso(20), { limit: 10 }, session.id)).items;
      assert.equal(pending.length, 2);
      assert.deepEqual(pending[0], first);
      assert.ok(pending.every((a) => a.sessionId === session.id && a.id !== stale.id));
      const all = [...pending.map((a) => a.id), theirs.id].sort(byteOrder);
      assert.deepEqual((await store.pendingApprovals(iso(20), { limit: 10 })).items.map((a) => a.id), all);
      assert.equal((await store.pendingApprovals(iso(5), { limit: 10 }, session.id)).items.length, 3, 'listed at a time before it expired');
      // A page at a time, oldest first: the cursor is the last id of the page.
      const firstPage = await store.pendingApprovals(iso(20), { limit: 2 });
      assert.deepEqual(firstPage.items.map((a) => a.id), all.slice(0, 2));
      assert.equal(firstPage.next_cursor, all[1]);
      const lastPage = await store.pendingApprovals(iso(20), { limit: 2, after: firstPage.next_cursor! });
      assert.deepEqual(lastPage, { items: [await store.getApproval(all[2])], next_cursor: null });
      assert.equal(await store.getApproval('apr_none'), null);
    });

    it('decides an approval once: of two deciders at once exactly one wins, and only in its session and in time', async () => {
      const { store } = await fresh();
      const { session } = await agentWithSession(store);
      const rec = held(session.id);
      await hold(store, rec);
      assert.equal(await store.decideApproval(rec.id, approve(1), { sessionId: 'ses_other' }), false, 'not in another session');
      assert.equal(await store.decideApproval(rec.id, approve(1), { openAt: iso(60_000) }), false, 'not once it expired');
      await warm(store);
      const deny: ApprovalDecision = { decision: 'denied', decidedBy: 'key_2', decidedAt: iso(2), reason: 'denied through the API' };
      const both = await Promise.all([store.decideApproval(rec.id, approve(2), { sessionId: session.id, openAt: iso(2) }), store.decideApproval(rec.id, deny)]);
      assert.deepEqual([...both].sort(), [false, true]);
      const decided = await store.getApproval(rec.id);
      const won = both[0] ? approve(2) : deny;
      assert.deepEqual(decided, { ...rec, ...won });
      assert.equal(await store.decideApproval(rec.id, { decision: 'expired', decidedBy: null, decidedAt: iso(3), reason: 'late' }), false);
      assert.deepEqual(await store.getApproval(rec.id), decided, 'a losing decision changes nothing');
      assert.deepEqual((await store.pendingApprovals(iso(3), { limit: 10 })).items, [], 'a decided approval is not pending');
      assert.equal(await store.decideApproval('apr_none', approve(3)), false);
    });

    it('an approval whose call no longer runs (its holder died) is not listed, counted or decidable by a person', async () => {
      const { store } = await fresh();
      const { session } = await agentWithSession(store);
      const orphan = held(session.id);
      await hold(store, orphan, 1);
      assert.equal((await store.pendingApprovals(iso(1), { limit: 10 })).items.length, 1);
      assert.equal(await store.interruptOrphanedCalls(), 1, "a call of no live instance");
      assert.deepEqual((await store.pendingApprovals(iso(1), { limit: 10 })).items, []);
      assert.equal(await hold(store, held(session.id), 1), true, 'it no longer takes the session\'s one place');
      assert.equal(await store.decideApproval(orphan.id, approve(2), { sessionId: session.id, openAt: iso(2) }), false);
      const stopped: ApprovalDecision = { decision: 'stopped', decidedBy: null, decidedAt: iso(3), reason: 'the server shut down' };
      assert.equal(await store.decideApproval(orphan.id, stopped), true, 'a holder\'s own ending is written all the same');
      assert.deepEqual(await store.getApproval(orphan.id), { ...orphan, ...stopped });
    });

    it('tells a holder which of its approvals were decided, or went with their deleted session', async () => {
      const { store } = await fresh();
      const one = await agentWithSession(store);
      const two = await agentWithSession(store);
      const [pending, decided, gone] = [held(one.session.id), held(one.session.id), held(two.session.id)];
      for (const rec of [pending, decided, gone]) await hold(store, rec);
      assert.deepEqual(await store.settledApprovals([pending.id, decided.id, gone.id]), []);
      await store.decideApproval(decided.id, approve(5));
      await store.deleteSession(two.session.id);
      const settled = await store.settledApprovals([pending.id, decided.id, gone.id, 'apr_never']);
      assert.deepEqual([...settled].sort((a, b) => byteOrder(a.id, b.id)), [
        { id: decided.id, record: { ...decided, ...approve(5) } }, { id: gone.id, record: null }, { id: 'apr_never', record: null },
      ].sort((a, b) => byteOrder(a.id, b.id)));
      assert.equal(await store.getApproval(gone.id), null, 'deleting a session deletes its approvals');
      assert.deepEqual(await store.settledApprovals([]), []);
      await store.deleteAgent(one.agentId);
      assert.equal(await store.getApproval(pending.id), null, 'and so does deleting its agent');
    });

    it('spends an approval id once, whoever asks and however many at once, until it is pruned after its expiry', async () => {
      const { store } = await fresh();
      const { session } = await agentWithSession(store);
      assert.equal(await store.redeemApproval('apr_1', iso(100)), true);
      assert.equal(await store.redeemApproval('apr_1', iso(100)), false);
      await warm(store);
      const racing = await Promise.all(Array.from({ length: 6 }, () => store.redeemApproval('apr_2', iso(300))));
      assert.equal(racing.filter(Boolean).length, 1);
      const old = held(session.id, { expiresAt: iso(100) });
      const recent = held(session.id, { expiresAt: iso(300) });
      await hold(store, old);
      await hold(store, recent);
      await store.pruneApprovals(iso(200));
      assert.equal(await store.getApproval(old.id), null);
      assert.ok(await store.getApproval(recent.id));
      assert.equal(await store.redeemApproval('apr_1', iso(100)), true, 'a pruned id is forgotten (it expired: the seal refuses it first)');
      assert.equal(await store.redeemApproval('apr_2', iso(300)), false, 'one not yet expired is kept');
    });

    const task = (sessionId: string, extra: Partial<TaskRecord> = {}): TaskRecord => ({
      id: newId('tsk'), sessionId, tool: 'slow', status: 'working', statusMessage: null, createdAt: iso(0), updatedAt: iso(0), expiresAt: iso(1000),
      ttlMs: 1000, pollIntervalMs: 500, owner: 'ins_live', outcome: null, pending: null, upstream: null, ...extra,
    });

    it('keeps a task within its session, ends it once (a cancel and a late end race: the first wins), and prunes it past its expiry', async () => {
      const { store } = await fresh();
      const { session } = await agentWithSession(store);
      await store.renewInstanceLease('ins_live', 60_000);
      const kept = task(session.id);
      assert.equal(await store.addTask(kept), true);
      assert.equal(await store.addTask(task('ses_gone')), false, 'no task for a session that is not there');
      const read = await store.getTask(session.id, kept.id);
      assert.deepEqual(read, { ...kept, ownerLive: true });
      const other = await agentWithSession(store);
      assert.equal(await store.getTask(other.session.id, kept.id), null, 'another session does not see it');

      assert.equal(await store.changeTask(kept.id, { status: 'completed', statusMessage: null, outcome: 'sealed', pending: null, at: iso(5) }, 'input_required'), false,
        'a change from a status it is not in changes nothing');
      assert.equal(await store.changeTask(kept.id, { status: 'cancelled', statusMessage: 'by its client', outcome: null, pending: null, at: iso(6) }), true);
      assert.equal(await store.changeTask(kept.id, { status: 'completed', statusMessage: null, outcome: 'sealed', pending: null, at: iso(7) }), false, 'terminal stays');
      const ended = await store.getTask(session.id, kept.id);
      assert.equal(ended?.status, 'cancelled');
      assert.equal(ended?.statusMessage, 'by its client');
      assert.equal(ended?.updatedAt, iso(6));
      const running = task(session.id, { owner: 'ins_unknown', expiresAt: iso(3000) });
      await store.addTask(running);
      assert.equal((await store.getTask(session.id, running.id))?.ownerLive, false, 'an owner without a live lease');
      assert.deepEqual((await store.endedTasks([kept.id, running.id, 'tsk_gone'])).sort(), [kept.id, 'tsk_gone'].sort());
      assert.equal(await store.changeTask(running.id, { status: 'completed', statusMessage: null, outcome: 'sealed', pending: null, at: iso(8), owner: 'ins_live' }), true);
      assert.deepEqual({ ...(await store.getTask(session.id, running.id)), ownerLive: undefined }, {
        ...running, status: 'completed', outcome: 'sealed', updatedAt: iso(8), owner: 'ins_live', ownerLive: undefined,
      });

      assert.equal(await store.pruneTasks(iso(2000)), 1);
      assert.equal(await store.getTask(session.id, kept.id), null);
      assert.ok(await store.getTask(session.id, running.id));
      await store.deleteSession(session.id);
      assert.equal(await store.getTask(session.id, running.id), null, 'gone with its session');
    });

    it('counts a session\'s tasks not yet ended nor expired (what its cap counts)', async () => {
      const { store } = await fresh();
      const { session } = await agentWithSession(store);
      const other = await agentWithSession(store);
      const working = task(session.id);
      const asking = task(session.id, { status: 'input_required' });
      const ended = task(session.id);
      const expired = task(session.id, { expiresAt: iso(50) });
      for (const t of [working, asking, ended, expired, task(other.session.id)]) assert.equal(await store.addTask(t), true);
      await store.changeTask(ended.id, { status: 'completed', statusMessage: null, outcome: 'sealed', pending: null, at: iso(5) });
      assert.equal(await store.liveTasks(session.id, iso(100)), 2, 'working and input_required count; ended, expired and another session\'s do not');
      assert.equal(await store.liveTasks(session.id, iso(10)), 3, 'not yet expired at that time');
      assert.equal(await store.liveTasks('ses_none', iso(10)), 0);
    });
  });
}
