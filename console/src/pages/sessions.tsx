// Sessions: start one of an agent, copy its MCP endpoint (shown once, at the start), try its tools from
// forms made from their input schemas, and browse its /volume/tmp (read-only).
import { useEffect, useState } from 'preact/hooks';
import {
  api, apiBytes, query, type AgentCallView, type AgentView, type CallAnswer, type CallInput, type CreatedSessionView, type FileEntry, type FileListing,
  type Page, type SessionInput, type SessionTool, type SessionTools, type SessionView, type VaultView,
} from '../api';
import { CopyButton, ErrorLine, Outcome, Section, useLoad, When } from '../components';
import { linkProps, navigate, userPagePath } from '../router';
import { SchemaForm } from '../schema-form';
import { Trace } from '../trace';


/**
 * The MCP endpoint of a session started in this page, in memory only: the API shows it once, and the console
 * keeps it no longer than the page (never in storage). A reload forgets it.
 */
const started = new Map<string, NonNullable<CreatedSessionView['mcp']>>();

/** Keeps the endpoint of a session started on another page (a user's), for its session page to show once. */
export function keepStartedEndpoint(session: CreatedSessionView): void {
  if (session.mcp) started.set(session.id, session.mcp);
}

export function SessionsPage({ agent }: { agent: string | null }) {
  const agents = useLoad(() => api<Page<AgentView>>('GET', '/v1/agents?limit=200'), []);
  const chosen = agent ?? agents.data?.items[0]?.id ?? null;
  const sessions = useLoad(() => (chosen ? api<Page<SessionView>>('GET', `/v1/agents/${encodeURIComponent(chosen)}/sessions?limit=200`) : Promise.resolve(null)), [chosen]);
  const vaults = useLoad(() => api<Page<VaultView>>('GET', '/v1/vaults?limit=200'), []);
  const [vaultIds, setVaultIds] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <div>
      <Section title="Sessions" actions={
        <form class="inline" onSubmit={async (e) => {
          e.preventDefault();
          if (!chosen) return;
          setBusy(true);
          setError(null);
          try {
            const input: SessionInput = vaultIds.length ? { vault_ids: vaultIds } : {};
            const session = await api<CreatedSessionView>('POST', `/v1/agents/${encodeURIComponent(chosen)}/sessions`, input);
            if (session.mcp) started.set(session.id, session.mcp);
            navigate(`/sessions/${session.id}`);
          } catch (err) {
            setError(err);
          } finally {
            setBusy(false);
          }
        }}>
          <label>agent <select name="agent" value={chosen ?? ''} onChange={(e) => navigate(`/sessions${query({ agent: (e.currentTarget as HTMLSelectElement).value })}`)}>
            {(agents.data?.items ?? []).map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select></label>
          {vaults.data?.items.length ? (
            <label>vaults <select name="vaults" multiple size={Math.min(3, vaults.data.items.length)} onChange={(e) => setVaultIds([...(e.currentTarget as HTMLSelectElement).selectedOptions].map((o) => o.value))}>
              {vaults.data.items.map((v) => <option key={v.id} value={v.id}>{v.name}</option>)}
            </select></label>
          ) : null}
          <button type="submit" disabled={!chosen || busy}>start a session</button>
        </form>
      }>
        <ErrorLine error={error ?? agents.error ?? sessions.error} />
        <table class="list">
          <thead><tr><th>session</th><th>agent version</th><th>started</th><th>expires</th></tr></thead>
          <tbody>
            {(sessions.data?.items ?? []).map((s) => (
              <tr key={s.id}>
                <td><a {...linkProps(`/sessions/${s.id}`)}><code>{s.id}</code></a></td>
                <td>{s.agent_version}</td>
                <td><When iso={s.created_at} /></td>
                <td><When iso={s.expires_at} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </div>
  );
}

function Endpoint({ id }: { id: string }) {
  const mcp = started.get(id);
  if (!mcp) return <p class="muted">The MCP endpoint of a session is shown once, when it starts (it holds the session's credential). Start a new session to get one.</p>;
  return (
    <div class="endpoint">
      <p>Give either form to an MCP client. Both are credentials: this page shows them now and forgets them when it reloads.</p>
      <div class="copy-row"><span>Capability URL (the URL alone is the credential)</span><CopyButton text={mcp.capability_url} label="copy capability URL" /></div>
      <div class="copy-row"><span>URL <code>{mcp.url}</code> with the header <code>Authorization: Bearer …</code></span>
        <CopyButton text={mcp.url} label="copy URL" /><CopyButton text={mcp.authorization} label="copy Authorization header" /></div>
    </div>
  );
}

function TryTool({ sessionId, tools, onCalled }: { sessionId: string; tools: SessionTool[]; onCalled: () => void }) {
  const [name, setName] = useState<string | null>(null);
  const tool = tools.find((t) => t.name === (name ?? tools[0]?.name));
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<CallAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (!tool) return <p class="muted">This session has no tools.</p>;
  return (
    <div class="try-tool">
      <label>tool <select name="tool" value={tool.name} onChange={(e) => { setName((e.currentTarget as HTMLSelectElement).value); setAnswer(null); }}>
        {tools.map((t) => <option key={t.name} value={t.name}>{t.name}</option>)}
      </select></label>
      {tool.description ? <p>{tool.description}</p> : null}
      <SchemaForm key={tool.name} schema={tool.inputSchema} busy={busy} submitLabel={`call ${tool.name}`} onSubmit={async (args) => {
        setBusy(true);
        setError(null);
        try {
          const input: CallInput = { tool: tool.name, arguments: args };
          setAnswer(await api<CallAnswer>('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/calls`, input));
          onCalled();
        } catch (err) {
          setError(err);
        } finally {
          setBusy(false);
        }
      }} />
      <ErrorLine error={error} />
      {answer ? <div class="try-result"><Trace call={answer.call} result={answer.result} /><p><a {...linkProps(`/calls/${answer.call.id}`)}>open in Calls</a></p></div> : null}
    </div>
  );
}

function FileBrowser({ sessionId, version }: { sessionId: string; version: number }) {
  const [path, setPath] = useState('');
  const listing = useLoad(() => api<FileListing>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/files${query({ path })}`), [sessionId, path, version]);
  const [preview, setPreview] = useState<{ name: string; text?: string; image?: string; size: number } | null>(null);
  useEffect(() => () => { if (preview?.image) URL.revokeObjectURL(preview.image); }, [preview]);
  const open = async (entry: FileEntry) => {
    const full = path ? `${path}/${entry.name}` : entry.name;
    if (entry.kind === 'directory') {
      setPath(full);
      setPreview(null);
      return;
    }
    if (entry.kind !== 'file') return;
    const blob = await apiBytes(`/v1/sessions/${encodeURIComponent(sessionId)}/files/content${query({ path: full })}`);
    const head = new Uint8Array(await blob.slice(0, 16).arrayBuffer());
    const imageType = head[0] === 0x89 && head[1] === 0x50 ? 'image/png' : head[0] === 0xff && head[1] === 0xd8 ? 'image/jpeg' : head[0] === 0x47 && head[1] === 0x49 ? 'image/gif' : null;
    if (imageType) setPreview({ name: full, image: URL.createObjectURL(new Blob([blob], { type: imageType })), size: blob.size });
    else setPreview({ name: full, text: await blob.slice(0, 64 * 1024).text(), size: blob.size });
  };
  const parts = path ? path.split('/') : [];
  return (
    <div class="files">
      <p class="crumbs">
        <button type="button" class="link" onClick={() => { setPath(''); setPreview(null); }}>/volume/tmp</button>
        {parts.map((p, i) => <span key={i}> / <button type="button" class="link" onClick={() => setPath(parts.slice(0, i + 1).join('/'))}>{p}</button></span>)}
      </p>
      <ErrorLine error={listing.error} />
      {listing.data && listing.data.entries.length === 0 ? <p class="muted">empty</p> : null}
      <table class="list">
        <tbody>
          {(listing.data?.entries ?? []).map((e) => (
            <tr key={e.name}>
              <td>{e.kind === 'file' || e.kind === 'directory' ? <button type="button" class="link" onClick={() => void open(e)}>{e.name}{e.kind === 'directory' ? '/' : ''}</button> : <span>{e.name}</span>}</td>
              <td class="muted">{e.kind}</td>
              <td>{e.kind === 'file' ? `${e.size} B` : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {listing.data?.truncated ? <p class="muted">(more entries not shown)</p> : null}
      {preview ? (
        <div class="preview">
          <h5>{preview.name} ({preview.size} B)</h5>
          {preview.image ? <img class="model-image" src={preview.image} alt={preview.name} /> : <pre class="block-text">{preview.text}</pre>}
        </div>
      ) : null}
    </div>
  );
}

export function SessionPage({ id }: { id: string }) {
  const session = useLoad(() => api<SessionView>('GET', `/v1/sessions/${encodeURIComponent(id)}`), [id]);
  const tools = useLoad(() => api<SessionTools>('GET', `/v1/sessions/${encodeURIComponent(id)}/tools`), [id]);
  const [version, setVersion] = useState(0);
  const calls = useLoad(() => api<Page<AgentCallView>>('GET', `/v1/calls${query({ session: id, limit: '20' })}`), [id, version]);
  if (session.error) return <ErrorLine error={session.error} />;
  const s = session.data;
  if (!s) return <p class="muted">Loading…</p>;
  return (
    <div>
      <p><a {...linkProps(`/sessions${query({ agent: s.agent_id })}`)}>← Sessions</a></p>
      <Section title={`Session ${s.id}`} actions={<button type="button" class="small danger" onClick={async () => {
        if (!confirm('End this session? Its /volume/tmp and call records are removed.')) return;
        await api('DELETE', `/v1/sessions/${encodeURIComponent(s.id)}`);
        started.delete(s.id);
        navigate(`/sessions${query({ agent: s.agent_id })}`);
      }}>end session</button>}>
        <dl class="facts">
          <dt>agent</dt><dd><a {...linkProps(`/agents/${s.agent_id}`)}><code>{s.agent_id}</code></a> version {s.agent_version}</dd>
          <dt>started</dt><dd><When iso={s.created_at} /></dd><dt>expires</dt><dd><When iso={s.expires_at} /></dd>
          {s.user_id !== null ? <><dt>user</dt><dd><a {...linkProps(userPagePath(s.user_id))}><code>{s.user_id}</code></a></dd></> : null}
          <dt>vaults</dt><dd>{s.vault_ids.length ? s.vault_ids.map((v) => <code key={v}>{v} </code>) : s.user_id !== null ? 'every vault of the user' : 'none'}</dd>
        </dl>
        <h4>MCP endpoint</h4>
        <Endpoint id={s.id} />
      </Section>
      <Section title="Try a tool">
        <ErrorLine error={tools.error} />
        {tools.data?.warnings?.length ? <ul class="warnings">{tools.data.warnings.map((w, i) => <li key={i}>{w}</li>)}</ul> : null}
        {tools.data ? <TryTool sessionId={s.id} tools={tools.data.items} onCalled={() => setVersion((v) => v + 1)} /> : null}
      </Section>
      <Section title="Calls of this session">
        <table class="list">
          <tbody>
            {(calls.data?.items ?? []).map((c) => (
              <tr key={c.id}><td><a {...linkProps(`/calls/${c.id}`)}><When iso={c.started_at} /></a></td><td><code>{c.tool}</code></td><td><Outcome outcome={c.outcome} /></td><td>{c.duration_ms ?? '…'} ms</td></tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Files in /volume/tmp (read-only)">
        <FileBrowser sessionId={s.id} version={version} />
      </Section>
    </div>
  );
}
