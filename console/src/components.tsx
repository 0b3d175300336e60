// Pieces every page uses: JSON shown readably, JSON Schemas as a field list, errors, copy buttons, time.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

export function ErrorLine({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.message} (${error.code})` : error instanceof Error ? error.message : String(error);
  return <p class="error" role="alert">{text}</p>;
}

export function Outcome({ outcome }: { outcome: string }) {
  return <span class={`outcome outcome-${outcome}`}>{outcome}</span>;
}

export function When({ iso }: { iso: string }) {
  const date = new Date(iso);
  return <time dateTime={iso} title={iso}>{Number.isNaN(date.getTime()) ? iso : date.toLocaleString()}</time>;
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button type="button" class="small" onClick={async () => {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    }}>{copied ? 'copied' : label}</button>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head"><h2>{title}</h2>{actions}</header>
      {children}
    </section>
  );
}

/** Loads once per `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: unknown; reload: () => void; loading: boolean } {
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then((data) => live && setState({ data, error: null, loading: false }), (error) => live && setState({ data: null, error, loading: false }));
    return () => { live = false; };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

type Schema = Record<string, any>;

const typeName = (schema: Schema): string => {
  if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if (schema.type === 'array') return `array of ${schema.items ? typeName(schema.items) : 'any'}`;
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  return typeof schema.type === 'string' ? schema.type : schema.anyOf || schema.oneOf ? 'one of several' : 'any';
};

/** A JSON Schema as people read it: each property with its type, whether required, its description. */
export function SchemaView({ schema }: { schema: Schema | undefined }) {
  if (!schema || typeof schema !== 'object') return <p class="muted">no schema</p>;
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required = new Set<string>(schema.required ?? []);
  const names = Object.keys(properties);
  if (names.length === 0) return <p class="muted">{schema.type === 'object' ? 'no arguments' : typeName(schema)}</p>;
  return (
    <table class="schema">
      <tbody>
        {names.map((name) => {
          const p = properties[name] ?? {};
          const limits = [
            p.minimum !== undefined && `≥ ${p.minimum}`, p.maximum !== undefined && `≤ ${p.maximum}`,
            p.minLength !== undefined && `length ≥ ${p.minLength}`, p.maxLength !== undefined && `length ≤ ${p.maxLength}`,
            p.pattern && `matches ${p.pattern}`, p.default !== undefined && `default ${JSON.stringify(p.default)}`,
          ].filter(Boolean).join(', ');
          return (
            <tr key={name}>
              <td><code>{name}</code>{required.has(name) ? <span class="required" title="required">*</span> : null}</td>
              <td><code class="type">{typeName(p)}</code></td>
              <td>{p.description ?? ''}{limits ? <span class="muted"> ({limits})</span> : null}
                {p.type === 'object' && p.properties ? <SchemaView schema={p} /> : null}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
