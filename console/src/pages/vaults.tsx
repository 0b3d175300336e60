// Vaults: their credentials by target and kind — never a secret (the API has none to give: they are sealed
// and write-only) — and forms to add and delete them.
import { useState } from 'preact/hooks';
import { api, type CredentialInput, type CredentialPayload, type CredentialView, type Page, type VaultInput, type VaultView } from '../api';
import { ErrorLine, Section, useLoad, When } from '../components';
import { linkProps, navigate, userPagePath } from '../router';


export function VaultsPage() {
  const list = useLoad(() => api<Page<VaultView>>('GET', '/v1/vaults?limit=200'), []);
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <div>
      <Section title="Vaults">
        <ErrorLine error={list.error} />
        <table class="list">
          <thead><tr><th>name</th><th>user</th><th>created</th><th>id</th></tr></thead>
          <tbody>
            {(list.data?.items ?? []).map((v) => (
              <tr key={v.id}><td><a {...linkProps(`/vaults/${v.id}`)}>{v.name}</a></td>
                <td>{v.user_id !== null ? <a {...linkProps(userPagePath(v.user_id))}><code>{v.user_id}</code></a> : <span class="muted">operator</span>}</td>
                <td><When iso={v.created_at} /></td><td><code class="muted">{v.id}</code></td></tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Create a vault">
        <form class="inline" onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            const input: VaultInput = { name };
            const vault = await api<VaultView>('POST', '/v1/vaults', input);
            navigate(`/vaults/${vault.id}`);
          } catch (err) {
            setError(err);
          }
        }}>
          <label>name <input name="vault-name" required value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} /></label>
          <button type="submit">create vault</button>
        </form>
        <ErrorLine error={error} />
      </Section>
    </div>
  );
}

function AddCredential({ vaultId, onAdded }: { vaultId: string; onAdded: () => void }) {
  const [target, setTarget] = useState('');
  const [kind, setKind] = useState<CredentialPayload['auth_scheme']>('static_bearer');
  const [header, setHeader] = useState('x-api-key');
  const [secret, setSecret] = useState('');
  const [label, setLabel] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <form class="stacked" autocomplete="off" onSubmit={async (e) => {
      e.preventDefault();
      setError(null);
      const payload: CredentialPayload = kind === 'static_bearer' ? { auth_scheme: kind, token: secret }
        : kind === 'static_headers' ? { auth_scheme: kind, headers: { [header]: secret } }
          : { auth_scheme: kind, access_token: secret };
      const input: CredentialInput = { target, payload, ...(label ? { display_name: label } : {}) };
      try {
        await api('POST', `/v1/vaults/${encodeURIComponent(vaultId)}/credentials`, input);
        setSecret('');
        setTarget('');
        setLabel('');
        onAdded();
      } catch (err) {
        setError(err);
      }
    }}>
      <label>target (an origin such as <code>https://api.example.com</code>, or an MCP server's URL)
        <input name="target" required value={target} onInput={(e) => setTarget((e.currentTarget as HTMLInputElement).value)} /></label>
      <label>kind <select name="kind" value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as typeof kind)}>
        <option value="static_bearer">bearer token</option>
        <option value="static_headers">a header</option>
        <option value="oauth">OAuth access token</option>
      </select></label>
      {kind === 'static_headers' ? <label>header name <input name="header" required value={header} onInput={(e) => setHeader((e.currentTarget as HTMLInputElement).value)} /></label> : null}
      <label>secret (sealed when stored; never shown again) <input name="secret" type="password" required value={secret} onInput={(e) => setSecret((e.currentTarget as HTMLInputElement).value)} /></label>
      <label>label (optional) <input name="display-name" value={label} onInput={(e) => setLabel((e.currentTarget as HTMLInputElement).value)} /></label>
      <ErrorLine error={error} />
      <button type="submit">add credential</button>
    </form>
  );
}

export function VaultPage({ id }: { id: string }) {
  const vault = useLoad(() => api<VaultView>('GET', `/v1/vaults/${encodeURIComponent(id)}`), [id]);
  const credentials = useLoad(() => api<Page<CredentialView>>('GET', `/v1/vaults/${encodeURIComponent(id)}/credentials?limit=200`), [id]);
  const [error, setError] = useState<unknown>(null);
  if (vault.error) return <ErrorLine error={vault.error} />;
  const v = vault.data;
  if (!v) return <p class="muted">Loading…</p>;
  return (
    <div>
      <p><a {...linkProps('/vaults')}>← Vaults</a></p>
      <Section title={`Vault ${v.name}`} actions={<button type="button" class="small danger" onClick={async () => {
        if (!confirm(`Delete the vault ${v.name} and its credentials?`)) return;
        try {
          await api('DELETE', `/v1/vaults/${encodeURIComponent(v.id)}`);
          navigate('/vaults');
        } catch (err) {
          setError(err);
        }
      }}>delete vault</button>}>
        <ErrorLine error={error ?? credentials.error} />
        <table class="list">
          <thead><tr><th>target</th><th>kind</th><th>label</th><th>expires</th><th></th></tr></thead>
          <tbody>
            {(credentials.data?.items ?? []).map((c) => (
              <tr key={c.id}>
                <td><code>{c.target}</code></td>
                <td>{c.auth_scheme}{c.refreshable ? ' (refreshable)' : ''}</td>
                <td>{c.display_name ?? ''}</td>
                <td>{c.expires_at ? <When iso={c.expires_at} /> : ''}</td>
                <td><button type="button" class="small danger" onClick={async () => {
                  try {
                    await api('DELETE', `/v1/vaults/${encodeURIComponent(v.id)}/credentials/${encodeURIComponent(c.id)}`);
                    credentials.reload();
                  } catch (err) {
                    setError(err);
                  }
                }}>delete</button></td>
              </tr>
            ))}
          </tbody>
        </table>
        {credentials.data && credentials.data.items.length === 0 ? <p class="muted">No credentials yet.</p> : null}
      </Section>
      <Section title="Add a credential">
        <AddCredential vaultId={v.id} onAdded={credentials.reload} />
      </Section>
    </div>
  );
}
