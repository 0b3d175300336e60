// Packages: every package with its versions; a package's tools with their schemas; upload a bundle.
import { useState } from 'preact/hooks';
import { api, ApiError, type Page, type PackageSummaryView, type PackageTool, type PackageView } from '../api';
import { ErrorLine, Json, SchemaView, Section, useLoad, When } from '../components';
import { linkProps, navigate } from '../router';


export function ToolList({ tools }: { tools: PackageTool[] }) {
  return (
    <div class="tools">
      {tools.map((t) => (
        <div class="tool" key={t.name}>
          <h4><code>{t.name}</code></h4>
          {t.description ? <p>{t.description}</p> : null}
          <h5>Input</h5>
          <SchemaView schema={t.inputSchema} />
          {t.outputSchema ? <><h5>Output</h5><SchemaView schema={t.outputSchema} /></> : null}
        </div>
      ))}
    </div>
  );
}

function Upload({ onDone }: { onDone: () => void }) {
  const [over, setOver] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: true; pkg: PackageView } | { ok: false; error: unknown } | null>(null);
  const send = async (file: File | undefined) => {
    if (!file) return;
    setBusy(true);
    setOutcome(null);
    try {
      const pkg = await api<PackageView>('POST', '/v1/packages', new Blob([await file.arrayBuffer()]));
      setOutcome({ ok: true, pkg });
      onDone();
    } catch (error) {
      setOutcome({ ok: false, error });
    } finally {
      setBusy(false);
    }
  };
  const problems = outcome && !outcome.ok && outcome.error instanceof ApiError ? outcome.error.problems : [];
  return (
    <Section title="Upload a package">
      <div
        class={`dropzone ${over ? 'over' : ''}`}
        onDragOver={(e) => { e.preventDefault(); setOver(true); }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => { e.preventDefault(); setOver(false); void send(e.dataTransfer?.files[0]); }}
      >
        <p>Drop a bundle (<code>.tar.gz</code> from <code>subako pack &lt;dir&gt;</code>) here, or</p>
        <label class="button">choose a file <input type="file" name="bundle" accept=".gz,.tgz,application/gzip" class="hidden-input" disabled={busy}
          onChange={(e) => void send((e.currentTarget as HTMLInputElement).files?.[0])} /></label>
        {busy ? <p class="muted">Checking…</p> : null}
      </div>
      {outcome?.ok ? (
        <div class="upload-result ok" role="status">
          <p>Accepted: the module and manifest passed their checks, and discovery found {outcome.pkg.tools.length} tool(s).</p>
          <p><a {...linkProps(`/packages/${outcome.pkg.name}`)}><code>{outcome.pkg.name}@{outcome.pkg.version}</code></a></p>
        </div>
      ) : null}
      {outcome && !outcome.ok ? <div class="upload-result refused"><p>Refused:</p><ErrorLine error={outcome.error} />
        {problems.length ? <ul class="problems">{problems.map((p, i) => <li key={i}><code>{p.code}</code> {p.message}</li>)}</ul> : null}</div> : null}
    </Section>
  );
}

export function PackagesPage() {
  const list = useLoad(() => api<Page<PackageView>>('GET', '/v1/packages?limit=200'), []);
  const byName = new Map<string, PackageView[]>();
  for (const p of list.data?.items ?? []) byName.set(p.name, [...(byName.get(p.name) ?? []), p]);
  return (
    <div>
      <Upload onDone={list.reload} />
      <Section title="Packages">
        <ErrorLine error={list.error} />
        <table class="list">
          <thead><tr><th>name</th><th>versions</th><th>tools (latest)</th><th>description</th></tr></thead>
          <tbody>
            {[...byName.entries()].map(([name, versions]) => {
              const latest = versions[versions.length - 1];
              return (
                <tr key={name}>
                  <td><a {...linkProps(`/packages/${name}`)}><code>{name}</code></a></td>
                  <td>{versions.map((v) => v.version).join(', ')}</td>
                  <td>{latest.tools.map((t) => t.name).join(', ')}</td>
                  <td>{latest.description ?? ''}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </Section>
    </div>
  );
}

export function PackagePage({ name }: { name: string }) {
  const summary = useLoad(() => api<PackageSummaryView>('GET', `/v1/packages/${encodeURIComponent(name)}`), [name]);
  const [version, setVersion] = useState<string | null>(null);
  const chosen = useLoad(
    () => (version ? api<PackageView>('GET', `/v1/packages/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`) : Promise.resolve(null)),
    [name, version],
  );
  const s = summary.data;
  if (summary.error) return <ErrorLine error={summary.error} />;
  if (!s) return <p class="muted">Loading…</p>;
  const tools = chosen.data?.tools ?? s.tools;
  return (
    <div>
      <p><a {...linkProps('/packages')}>← Packages</a></p>
      <Section title={`Package ${s.name}`}>
        {s.description ? <p>{s.description}</p> : null}
        <table class="list">
          <thead><tr><th>version</th><th>uploaded</th><th>digest</th><th>checks</th><th></th></tr></thead>
          <tbody>
            {s.versions.map((v) => (
              <tr key={v.version} class={(version ?? s.latest_version) === v.version ? 'selected' : ''}>
                <td><code>{v.version}</code>{v.version === s.latest_version ? <span class="muted"> (latest)</span> : null}</td>
                <td><When iso={v.created_at} /></td>
                <td><code class="muted">{v.digest.slice(0, 19)}…</code></td>
                <td><span class="outcome outcome-ok">passed</span></td>
                <td><button type="button" class="small" onClick={() => setVersion(v.version)}>show tools</button></td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="muted">Every stored version passed the upload checks (module limits, manifest) and discovery; a bundle that fails them is refused with its problems.</p>
      </Section>
      <Section title={`Tools of ${s.name}@${version ?? s.latest_version}`}>
        <ToolList tools={tools} />
        {chosen.data?.manifest ? <><h5>Manifest</h5><Json value={chosen.data.manifest} /></> : null}
        <p><button type="button" class="small danger" onClick={async () => {
          const v = version ?? s.latest_version;
          if (!confirm(`Delete ${s.name}@${v}?`)) return;
          try {
            await api('DELETE', `/v1/packages/${encodeURIComponent(s.name)}/versions/${encodeURIComponent(v)}`);
            navigate('/packages');
          } catch (e) {
            alert(e instanceof Error ? e.message : String(e));
          }
        }}>delete this version</button></p>
      </Section>
    </div>
  );
}
