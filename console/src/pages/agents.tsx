// Agents: each agent's versions and what each grants (packages and their egress, remote MCP servers and
// their policies, skills, vault credentials); a form to publish a new version or create an agent.
import { useState } from 'preact/hooks';
import { api, type AgentInput, type AgentSpecView, type AgentVersionView, type AgentView, type Page } from '../api';
import { ErrorLine, Json, Section, useLoad, When } from '../components';
import { linkProps, navigate } from '../router';
import { AgentSpecFields } from '../agent-form';
import { maskUrls, restoreUrls, shownRemoteUrl } from '../remote-url';

/**
 * A stored spec as the input it came from: each package and skill with the version its author asked for
 * (`requested`: "latest" stays "latest"), not the one it resolved to when published.
 */
function toInput(spec: AgentSpecView): AgentInput {
  return {
    name: spec.name,
    ...(spec.description ? { description: spec.description } : {}),
    tools: spec.tools.map(({ requested, version: _resolved, ...rest }) => ({ ...rest, version: requested })),
    skills: spec.skills.map(({ requested, version: _resolved, ...rest }) => ({ ...rest, version: requested })),
    mcp_servers: spec.mcp_servers,
  };
}

export function Grants({ spec }: { spec: AgentSpecView }) {
  const tools = spec.tools ?? [];
  const servers = spec.mcp_servers ?? [];
  const skills = spec.skills ?? [];
  return (
    <div class="grants">
      <h5>Function packages</h5>
      {tools.length === 0 ? <p class="muted">none</p> : (
        <ul>{tools.map((t, i) => (
          <li key={i}><a {...linkProps(`/packages/${t.package}`)}><code>{t.package}@{t.version ?? 'latest'}</code></a>
            {t.data ? ' · /volume/data' : ''}
            {' · egress: '}{t.egress?.allow?.length ? t.egress.allow.map((h) => <code key={h}>{h} </code>) : <span class="muted">none (deny by default)</span>}
            {t.egress?.grants?.length ? <> · credentials for {t.egress.grants.map((g) => <code key={g}>{g} </code>)}</> : null}
          </li>
        ))}</ul>
      )}
      <h5>Remote MCP servers</h5>
      {servers.length === 0 ? <p class="muted">none</p> : (
        <ul>{servers.map((s, i) => (
          <li key={i}><code>{s.name}</code> at <code class="remote-origin">{shownRemoteUrl(s.url)}</code> · default policy <strong>{s.default_policy ?? 'allow'}</strong>
            {s.credential ? <> · credential from vault <a {...linkProps(`/vaults/${s.credential.vault_id}`)}><code>{s.credential.vault_id}</code></a></> : null}
            {s.tools?.length ? <ul>{s.tools.map((t) => <li key={t.name}><code>{t.name}</code>: {t.policy}</li>)}</ul> : null}
          </li>
        ))}</ul>
      )}
      <h5>Skills</h5>
      {skills.length === 0 ? <p class="muted">none</p> : <ul>{skills.map((s, i) => <li key={i}><code>{s.name}@{s.version ?? 'latest'}</code></li>)}</ul>}
    </div>
  );
}

function SpecForm({ initial, submitLabel, onSubmit }: { initial: AgentInput; submitLabel: string; onSubmit: (spec: AgentInput) => Promise<void> }) {
  const [text, setText] = useState(JSON.stringify(initial, null, 2));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form class="spec-form" onSubmit={async (e) => {
      e.preventDefault();
      setError(null);
      // What the person typed, sent as it is: the server checks it against AgentInput's schema and says what is wrong.
      let spec: AgentInput;
      try {
        spec = JSON.parse(text);
      } catch {
        setError(new Error('The spec is not valid JSON.'));
        return;
      }
      setBusy(true);
      try {
        await onSubmit(spec);
      } catch (err) {
        setError(err);
      } finally {
        setBusy(false);
      }
    }}>
      <p class="muted">The whole spec: <code>name</code>, <code>description</code>, <code>tools</code> (packages with <code>egress.allow</code>, <code>egress.grants</code>, <code>data</code>), <code>mcp_servers</code> (with <code>default_policy</code>, per-tool <code>policy</code>, <code>credential</code>), <code>skills</code>.</p>
      <textarea name="spec" rows={14} spellcheck={false} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
      <ErrorLine error={error} />
      <button type="submit" disabled={busy}>{submitLabel}</button>
    </form>
  );
}

/**
 * The next version, from a form or as JSON: both start from the current spec with remote URLs shown as their
 * origins, and a URL left as shown is sent as the stored one.
 */
function Publish({ spec, onPublish }: { spec: AgentSpecView; onPublish: (spec: AgentInput) => Promise<void> }) {
  const [mode, setMode] = useState<'form' | 'json'>('form');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const input = toInput(spec);
  const initial = { ...input, mcp_servers: maskUrls(input.mcp_servers ?? []) };
  const publish = async (next: AgentInput) => {
    setBusy(true);
    setError(null);
    try {
      await onPublish({ ...next, mcp_servers: restoreUrls(next.mcp_servers, spec.mcp_servers) });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="publish">
      <p class="tabs">
        <button type="button" class={mode === 'form' ? 'small active' : 'small'} aria-pressed={mode === 'form'} onClick={() => setMode('form')}>form</button>{' '}
        <button type="button" class={mode === 'json' ? 'small active' : 'small'} aria-pressed={mode === 'json'} onClick={() => setMode('json')}>JSON</button>
      </p>
      {mode === 'form'
        ? <AgentSpecFields initial={initial} busy={busy} submitLabel="publish version" onSubmit={(next) => void publish(next)} />
        : <SpecForm initial={initial} submitLabel="publish version" onSubmit={publish} />}
      <ErrorLine error={error} />
    </div>
  );
}

export function AgentsPage() {
  const list = useLoad(() => api<Page<AgentView>>('GET', '/v1/agents?limit=200'), []);
  return (
    <div>
      <Section title="Agents">
        <ErrorLine error={list.error} />
        <table class="list">
          <thead><tr><th>name</th><th>version</th><th>updated</th><th>id</th></tr></thead>
          <tbody>
            {(list.data?.items ?? []).map((a) => (
              <tr key={a.id}>
                <td><a {...linkProps(`/agents/${a.id}`)}>{a.name}</a></td>
                <td>{a.version}</td>
                <td><When iso={a.updated_at} /></td>
                <td><code class="muted">{a.id}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Create an agent">
        <SpecForm initial={{ name: 'my-agent', tools: [{ package: 'greet' }] }} submitLabel="create agent" onSubmit={async (spec) => {
          const agent = await api<AgentView>('POST', '/v1/agents', spec);
          navigate(`/agents/${agent.id}`);
        }} />
      </Section>
    </div>
  );
}

export function AgentPage({ id }: { id: string }) {
  const agent = useLoad(() => api<AgentView>('GET', `/v1/agents/${encodeURIComponent(id)}`), [id]);
  const versions = useLoad(() => api<Page<AgentVersionView>>('GET', `/v1/agents/${encodeURIComponent(id)}/versions?limit=200`), [id]);
  const [open, setOpen] = useState<number | null>(null);
  if (agent.error) return <ErrorLine error={agent.error} />;
  const a = agent.data;
  if (!a) return <p class="muted">Loading…</p>;
  const shown = (versions.data?.items ?? []).find((v) => v.version === (open ?? a.version));
  return (
    <div>
      <p><a {...linkProps('/agents')}>← Agents</a></p>
      <Section title={`Agent ${a.name}`} actions={<a class="button" {...linkProps(`/sessions?agent=${a.id}`)}>sessions</a>}>
        <dl class="facts"><dt>id</dt><dd><code>{a.id}</code></dd><dt>current version</dt><dd>{a.version}</dd><dt>created</dt><dd><When iso={a.created_at} /></dd></dl>
      </Section>
      <Section title="Versions">
        <ErrorLine error={versions.error} />
        <table class="list">
          <thead><tr><th>version</th><th>published</th><th></th></tr></thead>
          <tbody>
            {(versions.data?.items ?? []).map((v) => (
              <tr key={v.version} class={v.version === (open ?? a.version) ? 'selected' : ''}>
                <td>{v.version}{v.version === a.version ? <span class="muted"> (current)</span> : null}</td>
                <td><When iso={v.created_at} /></td>
                <td><button type="button" class="small" onClick={() => setOpen(v.version)}>what it grants</button></td>
              </tr>
            ))}
          </tbody>
        </table>
        {shown ? <><h4>Version {shown.version} grants</h4><Grants spec={shown.spec} /><details><summary>spec as JSON</summary><Json value={{ ...shown.spec, mcp_servers: maskUrls(shown.spec.mcp_servers) }} /></details></> : null}
      </Section>
      <Section title="Publish a new version">
        {a.spec ? <Publish key={a.version} spec={a.spec} onPublish={async (spec) => {
          await api('PUT', `/v1/agents/${encodeURIComponent(a.id)}`, spec);
          agent.reload();
          versions.reload();
          setOpen(null);
        }} /> : null}
      </Section>
    </div>
  );
}
