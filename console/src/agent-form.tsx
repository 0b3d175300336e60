// An agent's spec as a form: each function package with its egress allow list, credential grants and data
// volume; each remote MCP server with its URL (shown as its origin: remote-url.ts), vault credential, default
// policy and per-tool policies; the skills. It gives the AgentInput the JSON editor gives; the server checks both.
import { useState } from 'preact/hooks';
import type { AgentInput } from './api';

type Policy = NonNullable<NonNullable<AgentInput['mcp_servers']>[number]['default_policy']>;
const POLICIES: readonly Policy[] = ['allow', 'require_approval', 'require_user_approval', 'deny'];

interface PackageFields { package: string; version: string; allow: string; grants: string; data: boolean }
interface ServerFields { name: string; url: string; vault: string; defaultPolicy: Policy; toolPolicies: string }
interface Fields { name: string; description: string; packages: PackageFields[]; servers: ServerFields[]; skills: string }

/** A list typed one item a line (or separated by commas), blanks left out. */
const lines = (text: string): string[] => text.split(/[\n,]/).map((l) => l.trim()).filter(Boolean);

function fieldsOf(spec: AgentInput): Fields {
  return {
    name: spec.name,
    description: spec.description ?? '',
    packages: (spec.tools ?? []).map((t) => ({
      package: t.package, version: t.version ?? '', allow: (t.egress?.allow ?? []).join('\n'), grants: (t.egress?.grants ?? []).join('\n'), data: t.data === true,
    })),
    servers: (spec.mcp_servers ?? []).map((s) => ({
      name: s.name, url: s.url, vault: s.credential?.vault_id ?? '', defaultPolicy: s.default_policy ?? 'allow',
      toolPolicies: (s.tools ?? []).map((t) => `${t.name}=${t.policy}`).join('\n'),
    })),
    skills: (spec.skills ?? []).map((s) => (s.version ? `${s.name}@${s.version}` : s.name)).join('\n'),
  };
}

/** The spec the fields say; throws an Error naming the line that does not read. */
function specOf(fields: Fields, credentials: Map<string, NonNullable<NonNullable<AgentInput['mcp_servers']>[number]['credential']>>): AgentInput {
  return {
    name: fields.name.trim(),
    ...(fields.description.trim() ? { description: fields.description.trim() } : {}),
    tools: fields.packages.map((p) => ({
      package: p.package.trim(),
      ...(p.version.trim() ? { version: p.version.trim() } : {}),
      egress: { allow: lines(p.allow), grants: lines(p.grants) },
      ...(p.data ? { data: true } : {}),
    })),
    mcp_servers: fields.servers.map((s) => {
      const tools = lines(s.toolPolicies).map((line) => {
        const [name, policy] = line.split('=').map((x) => x.trim());
        if (!name || !POLICIES.includes(policy as Policy)) throw new Error(`${s.name}: "${line}" is not tool=policy (policy one of ${POLICIES.join(', ')})`);
        return { name, policy: policy as Policy };
      });
      const vault = s.vault.trim();
      // The credential id stays as it was when the vault is the same one.
      const kept = credentials.get(s.name);
      const credential = vault ? (kept && kept.vault_id === vault ? kept : { vault_id: vault }) : null;
      return { name: s.name.trim(), url: s.url.trim(), credential, default_policy: s.defaultPolicy, tools };
    }),
    skills: lines(fields.skills).map((line) => {
      const at = line.lastIndexOf('@');
      return at > 0 ? { name: line.slice(0, at), version: line.slice(at + 1) } : { name: line };
    }),
  };
}

const value = (e: Event): string => (e.currentTarget as HTMLInputElement).value;

export function AgentSpecFields({ initial, busy, submitLabel, onSubmit }: {
  /** The spec with remote URLs already shown as their origins. */
  initial: AgentInput; busy: boolean; submitLabel: string; onSubmit: (spec: AgentInput) => void;
}) {
  const [fields, setFields] = useState<Fields>(() => fieldsOf(initial));
  const [error, setError] = useState<string | null>(null);
  const credentials = new Map((initial.mcp_servers ?? []).filter((s) => s.credential).map((s) => [s.name, s.credential!]));
  const setPackage = (i: number, part: Partial<PackageFields>) => setFields({ ...fields, packages: fields.packages.map((p, j) => (i === j ? { ...p, ...part } : p)) });
  const setServer = (i: number, part: Partial<ServerFields>) => setFields({ ...fields, servers: fields.servers.map((s, j) => (i === j ? { ...s, ...part } : s)) });
  return (
    <form class="agent-fields stacked" onSubmit={(e) => {
      e.preventDefault();
      setError(null);
      try {
        onSubmit(specOf(fields, credentials));
      } catch (err) {
        setError(err instanceof Error ? err.message : String(err));
      }
    }}>
      <label>name <input name="agent-name" required value={fields.name} onInput={(e) => setFields({ ...fields, name: value(e) })} /></label>
      <label>description <input name="agent-description" value={fields.description} onInput={(e) => setFields({ ...fields, description: value(e) })} /></label>
      <h5>Function packages</h5>
      {fields.packages.map((p, i) => (
        <fieldset key={i} class="grant" data-package={p.package}>
          <legend>package {i + 1}</legend>
          <label>package <input name="package" required value={p.package} onInput={(e) => setPackage(i, { package: value(e) })} /></label>
          <label>version (empty: latest) <input name="package-version" value={p.version} onInput={(e) => setPackage(i, { version: value(e) })} /></label>
          <label>egress allow list (one host a line) <textarea name="egress-allow" rows={3} value={p.allow} onInput={(e) => setPackage(i, { allow: value(e) })} /></label>
          <label>credential grants (one https origin a line, e.g. https://api.example.com) <textarea name="egress-grants" rows={2} value={p.grants} onInput={(e) => setPackage(i, { grants: value(e) })} /></label>
          <label class="check"><input type="checkbox" name="package-data" checked={p.data} onChange={(e) => setPackage(i, { data: (e.currentTarget as HTMLInputElement).checked })} /> /volume/data</label>
          <button type="button" class="small danger" onClick={() => setFields({ ...fields, packages: fields.packages.filter((_, j) => j !== i) })}>remove package</button>
        </fieldset>
      ))}
      <button type="button" class="small" onClick={() => setFields({ ...fields, packages: [...fields.packages, { package: '', version: '', allow: '', grants: '', data: false }] })}>add a package</button>
      <h5>Remote MCP servers</h5>
      {fields.servers.map((s, i) => (
        <fieldset key={i} class="remote" data-server={s.name}>
          <legend>server {i + 1}</legend>
          <label>name <input name="server-name" required value={s.name} onInput={(e) => setServer(i, { name: value(e) })} /></label>
          <label>URL (a stored one is shown as its origin and kept unless replaced) <input name="server-url" required value={s.url} onInput={(e) => setServer(i, { url: value(e) })} /></label>
          <label>credential from vault (a vault id; empty: none) <input name="server-vault" value={s.vault} onInput={(e) => setServer(i, { vault: value(e) })} /></label>
          <label>approval policy <select name="server-policy" value={s.defaultPolicy} onChange={(e) => setServer(i, { defaultPolicy: value(e) as Policy })}>
            {POLICIES.map((p) => <option key={p} value={p}>{p}</option>)}
          </select></label>
          <label>per-tool policies (tool=policy, one a line) <textarea name="server-tool-policies" rows={2} value={s.toolPolicies} onInput={(e) => setServer(i, { toolPolicies: value(e) })} /></label>
          <button type="button" class="small danger" onClick={() => setFields({ ...fields, servers: fields.servers.filter((_, j) => j !== i) })}>remove server</button>
        </fieldset>
      ))}
      <button type="button" class="small" onClick={() => setFields({ ...fields, servers: [...fields.servers, { name: '', url: '', vault: '', defaultPolicy: 'allow', toolPolicies: '' }] })}>add a remote server</button>
      <label>skills (name or name@version, one a line) <textarea name="skills" rows={2} value={fields.skills} onInput={(e) => setFields({ ...fields, skills: value(e) })} /></label>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <button type="submit" disabled={busy}>{submitLabel}</button>
    </form>
  );
}
