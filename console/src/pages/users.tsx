// Users: the end users the operator's application named, each with the vaults it owns — their credentials by
// target, kind and whether they are still good, never a secret, each revocable — and the sessions opened for it.
import { useState } from 'preact/hooks';
import {
  api, type AgentView, type ConnectionView, type DisconnectedView, type CreatedSessionView, type CredentialView, type Page, type SessionInput, type SessionView, type UserInput, type UserView,
  type VaultInput, type VaultView,
} from '../api';
import { ErrorLine, Section, useLoad, When } from '../components';
import { linkProps, navigate, userPagePath } from '../router';
import { keepStartedEndpoint } from './sessions';

const userPath = (id: string): string => `/v1/users/${encodeURIComponent(id)}`;

export function UsersPage() {
  const list = useLoad(() => api<Page<UserView>>('GET', '/v1/users?limit=200'), []);
  const [fields, setFields] = useState({ id: '', display_name: '', email: '' });
  const [error, setError] = useState<unknown>(null);
  const set = (name: keyof typeof fields) => (e: Event) => setFields({ ...fields, [name]: (e.currentTarget as HTMLInputElement).value });
  return (
    <div>
      <Section title="Users">
        <ErrorLine error={list.error} />
        <table class="list">
          <thead><tr><th>id</th><th>name</th><th>email</th><th>created</th></tr></thead>
          <tbody>
            {(list.data?.items ?? []).map((u) => (
              <tr key={u.id}>
                <td><a {...linkProps(userPagePath(u.id))}><code>{u.id}</code></a></td>
                <td>{u.display_name ?? ''}</td><td>{u.email ?? ''}</td><td><When iso={u.created_at} /></td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data && list.data.items.length === 0 ? <p class="muted">No users yet. Your application adds them under its own ids (POST /v1/users), or add one here.</p> : null}
      </Section>
      <Section title="Add a user">
        <form class="inline" autocomplete="off" onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            const input: UserInput = { id: fields.id, ...(fields.display_name ? { display_name: fields.display_name } : {}), ...(fields.email ? { email: fields.email } : {}) };
            const user = await api<UserView>('POST', '/v1/users', input);
            navigate(userPagePath(user.id));
          } catch (err) {
            setError(err);
          }
        }}>
          <label>id <input name="user-id" required value={fields.id} onInput={set('id')} /></label>
          <label>name <input name="display-name" value={fields.display_name} onInput={set('display_name')} /></label>
          <label>email <input name="email" type="email" value={fields.email} onInput={set('email')} /></label>
          <button type="submit">add user</button>
        </form>
        <ErrorLine error={error} />
      </Section>
    </div>
  );
}

/** Whether a credential is still good: one with an expiry past it (and nothing to refresh it) is expired. */
function credentialState(c: CredentialView): string {
  if (c.expires_at === null) return 'connected';
  const expired = Date.parse(c.expires_at) <= Date.now();
  if (!expired) return 'connected';
  return c.refreshable ? 'expired (refreshed at its next use)' : 'expired';
}

/** One vault of the user: its credentials, each with its state and a way to revoke it. */
function UserVault({ vault, onChanged }: { vault: VaultView; onChanged: () => void }) {
  const credentials = useLoad(() => api<Page<CredentialView>>('GET', `/v1/vaults/${encodeURIComponent(vault.id)}/credentials?limit=200`), [vault.id]);
  const [error, setError] = useState<unknown>(null);
  return (
    <div class="user-vault" data-vault={vault.id}>
      <h4><a {...linkProps(`/vaults/${vault.id}`)}>{vault.name}</a> <code class="muted">{vault.id}</code></h4>
      <ErrorLine error={error ?? credentials.error} />
      <table class="list">
        <thead><tr><th>target</th><th>kind</th><th>state</th><th>expires</th><th></th></tr></thead>
        <tbody>
          {(credentials.data?.items ?? []).map((c) => (
            <tr key={c.id}>
              <td><code>{c.target}</code></td>
              <td>{c.auth_scheme}</td>
              <td class="credential-state">{credentialState(c)}</td>
              <td>{c.expires_at ? <When iso={c.expires_at} /> : ''}</td>
              <td><button type="button" class="small danger" onClick={async () => {
                if (!confirm(`Revoke the credential for ${c.target}? The user's sessions stop using it at once.`)) return;
                try {
                  await api('DELETE', `/v1/vaults/${encodeURIComponent(vault.id)}/credentials/${encodeURIComponent(c.id)}`);
                  credentials.reload();
                  onChanged();
                } catch (err) {
                  setError(err);
                }
              }}>revoke</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      {credentials.data && credentials.data.items.length === 0 ? <p class="muted">No credentials in this vault.</p> : null}
    </div>
  );
}

/**
 * The connections the user made themselves (OAuth grants subako holds for them): connected or expired, the scopes,
 * when the token runs out; never a token. Disconnect revokes at the authorization server and deletes.
 */
function UserConnections({ userId }: { userId: string }) {
  const connections = useLoad(() => api<{ items: ConnectionView[] }>('GET', `${userPath(userId)}/connections`), [userId]);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState<string | null>(null);
  const items = connections.data?.items ?? [];
  return (
    <section class="card connections">
      <header class="card-head"><h2>Connections</h2></header>
      <p class="muted">Accounts the user connected themselves when an agent's tool needed them. Tokens are sealed and never shown.</p>
      <ErrorLine error={error ?? connections.error} />
      {said ? <p class="muted">{said}</p> : null}
      {items.length > 0 ? (
        <table class="list">
          <thead><tr><th>connection</th><th>for</th><th>state</th><th>scopes</th><th>expires</th><th></th></tr></thead>
          <tbody>
            {items.map((c) => (
              <tr key={c.id} data-connection={c.name}>
                <td>{c.name}</td>
                <td><code>{c.target}</code></td>
                <td class="connection-state">{c.status}</td>
                <td>{c.scopes.map((s) => <code key={s}>{s}</code>)}</td>
                <td>{c.expires_at ? <When iso={c.expires_at} /> : ''}</td>
                <td><button type="button" class="small danger" onClick={async () => {
                  if (!confirm(`Disconnect ${c.name} for ${userId}? Its tokens are revoked; the user is asked to connect again at the next call that needs it.`)) return;
                  setError(null);
                  try {
                    const done = await api<DisconnectedView>('DELETE', `${userPath(userId)}/connections/${encodeURIComponent(c.id)}`);
                    setSaid(`${c.name}: ${done.revocation}`);
                    connections.reload();
                  } catch (err) {
                    setError(err);
                  }
                }}>Disconnect</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {connections.data && items.length === 0 ? <p class="muted">No connections.</p> : null}
    </section>
  );
}

function StartSession({ userId }: { userId: string }) {
  const agents = useLoad(() => api<Page<AgentView>>('GET', '/v1/agents?limit=200'), []);
  const [agent, setAgent] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const chosen = agent ?? agents.data?.items[0]?.id ?? null;
  return (
    <form class="inline" onSubmit={async (e) => {
      e.preventDefault();
      if (!chosen) return;
      setError(null);
      try {
        const input: SessionInput = { user_id: userId };
        const session = await api<CreatedSessionView>('POST', `/v1/agents/${encodeURIComponent(chosen)}/sessions`, input);
        keepStartedEndpoint(session);
        navigate(`/sessions/${session.id}`);
      } catch (err) {
        setError(err);
      }
    }}>
      <label>agent <select name="session-agent" value={chosen ?? ''} onChange={(e) => setAgent((e.currentTarget as HTMLSelectElement).value)}>
        {(agents.data?.items ?? []).map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
      </select></label>
      <button type="submit" disabled={!chosen}>start a session for this user</button>
      <ErrorLine error={error ?? agents.error} />
    </form>
  );
}

export function UserPage({ id }: { id: string }) {
  const user = useLoad(() => api<UserView>('GET', userPath(id)), [id]);
  const vaults = useLoad(() => api<Page<VaultView>>('GET', `${userPath(id)}/vaults?limit=200`), [id]);
  const sessions = useLoad(() => api<Page<SessionView>>('GET', `${userPath(id)}/sessions?limit=200`), [id]);
  const [vaultName, setVaultName] = useState('');
  const [error, setError] = useState<unknown>(null);
  if (user.error) return <ErrorLine error={user.error} />;
  const u = user.data;
  if (!u) return <p class="muted">Loading…</p>;
  return (
    <div>
      <p><a {...linkProps('/users')}>← Users</a></p>
      <Section title={`User ${u.display_name ?? u.id}`} actions={<button type="button" class="small danger" onClick={async () => {
        if (!confirm(`Delete the user ${u.id}, its vaults with their credentials, and its sessions?`)) return;
        try {
          await api('DELETE', userPath(u.id));
          navigate('/users');
        } catch (err) {
          setError(err);
        }
      }}>delete user</button>}>
        <ErrorLine error={error} />
        <dl class="facts">
          <dt>id</dt><dd><code>{u.id}</code></dd>
          <dt>name</dt><dd>{u.display_name ?? '-'}</dd><dt>email</dt><dd>{u.email ?? '-'}</dd>
          <dt>created</dt><dd><When iso={u.created_at} /></dd>
        </dl>
      </Section>
      <UserConnections userId={u.id} />
      <Section title="Vaults and credentials">
        <p class="muted">Only this user's sessions use these vaults. Secrets are sealed and never shown.</p>
        <ErrorLine error={vaults.error} />
        {(vaults.data?.items ?? []).map((v) => <UserVault key={v.id} vault={v} onChanged={vaults.reload} />)}
        {vaults.data && vaults.data.items.length === 0 ? <p class="muted">This user has no vaults.</p> : null}
        <form class="inline" onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            const input: VaultInput = { name: vaultName };
            const vault = await api<VaultView>('POST', `${userPath(u.id)}/vaults`, input);
            navigate(`/vaults/${vault.id}`);
          } catch (err) {
            setError(err);
          }
        }}>
          <label>new vault <input name="vault-name" required value={vaultName} onInput={(e) => setVaultName((e.currentTarget as HTMLInputElement).value)} /></label>
          <button type="submit">create vault for this user</button>
        </form>
      </Section>
      <Section title="Sessions">
        <ErrorLine error={sessions.error} />
        <table class="list">
          <thead><tr><th>session</th><th>agent</th><th>started</th><th>expires</th></tr></thead>
          <tbody>
            {(sessions.data?.items ?? []).map((s) => (
              <tr key={s.id}>
                <td><a {...linkProps(`/sessions/${s.id}`)}><code>{s.id}</code></a></td>
                <td><a {...linkProps(`/agents/${s.agent_id}`)}><code>{s.agent_id}</code></a> v{s.agent_version}</td>
                <td><When iso={s.created_at} /></td><td><When iso={s.expires_at} /></td>
              </tr>
            ))}
          </tbody>
        </table>
        {sessions.data && sessions.data.items.length === 0 ? <p class="muted">No sessions for this user.</p> : null}
        <StartSession userId={u.id} />
      </Section>
    </div>
  );
}
