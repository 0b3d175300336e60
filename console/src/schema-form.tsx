// A form generated from a tool's input schema: one field per property (text, number, checkbox, choice, or
// JSON for objects and arrays), giving the arguments object the tool expects.
import { useState } from 'preact/hooks';

type Schema = Record<string, any>;

function kindOf(schema: Schema): 'enum' | 'string' | 'number' | 'integer' | 'boolean' | 'json' {
  if (Array.isArray(schema.enum)) return 'enum';
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type;
  return 'json';
}

/** The arguments from the fields' texts; throws an Error naming the field that does not parse. */
function argumentsFrom(schema: Schema, values: Record<string, string | boolean>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries<Schema>(schema.properties ?? {})) {
    const value = values[name];
    const kind = kindOf(prop);
    if (kind === 'boolean') {
      if (value !== undefined) out[name] = value === true;
      continue;
    }
    if (value === undefined || value === '') continue;
    const text = String(value);
    if (kind === 'number' || kind === 'integer') {
      const n = Number(text);
      if (!Number.isFinite(n)) throw new Error(`${name}: not a number`);
      out[name] = n;
    } else if (kind === 'json') {
      try {
        out[name] = JSON.parse(text);
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    } else if (kind === 'enum') {
      out[name] = prop.enum.find((v: unknown) => JSON.stringify(v) === text) ?? text;
    } else {
      out[name] = text;
    }
  }
  return out;
}

export function SchemaForm({ schema, onSubmit, busy, submitLabel }: {
  schema: Schema; busy: boolean; submitLabel: string; onSubmit: (args: Record<string, unknown>) => void;
}) {
  const properties: Record<string, Schema> = schema?.properties ?? {};
  const required = new Set<string>(schema?.required ?? []);
  const names = Object.keys(properties);
  // No properties named, and others not forbidden: any object will do, written as JSON.
  const free = names.length === 0 && schema?.additionalProperties !== false;
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [raw, setRaw] = useState('{}');
  const [error, setError] = useState<string | null>(null);
  const set = (name: string, value: string | boolean) => setValues({ ...values, [name]: value });
  return (
    <form class="schema-form" onSubmit={(e) => {
      e.preventDefault();
      setError(null);
      try {
        onSubmit(free ? JSON.parse(raw) : argumentsFrom(schema ?? {}, values));
      } catch (err) {
        setError(err instanceof Error ? err.message : String(err));
      }
    }}>
      {names.map((name) => {
        const prop = properties[name];
        const kind = kindOf(prop);
        const id = `arg-${name}`;
        const label = <label for={id}><code>{name}</code>{required.has(name) ? <span class="required">*</span> : null}{prop.description ? <span class="muted"> — {prop.description}</span> : null}</label>;
        if (kind === 'boolean') {
          return <div class="field check" key={name}><input id={id} name={name} type="checkbox" checked={values[name] === true} onChange={(e) => set(name, (e.currentTarget as HTMLInputElement).checked)} />{label}</div>;
        }
        if (kind === 'enum') {
          return (
            <div class="field" key={name}>{label}
              <select id={id} name={name} value={String(values[name] ?? '')} onChange={(e) => set(name, (e.currentTarget as HTMLSelectElement).value)}>
                <option value="">—</option>
                {prop.enum.map((v: unknown) => <option key={JSON.stringify(v)} value={JSON.stringify(v)}>{String(v)}</option>)}
              </select>
            </div>
          );
        }
        if (kind === 'json') {
          return <div class="field" key={name}>{label}<textarea id={id} name={name} rows={3} spellcheck={false} placeholder="JSON" value={String(values[name] ?? '')} onInput={(e) => set(name, (e.currentTarget as HTMLTextAreaElement).value)} /></div>;
        }
        const common = {
          id, name, required: required.has(name), placeholder: prop.default !== undefined ? String(prop.default) : '', value: String(values[name] ?? ''),
          onInput: (e: Event) => set(name, (e.currentTarget as HTMLInputElement).value),
        };
        return (
          <div class="field" key={name}>{label}
            {kind === 'string' ? <input type="text" {...common} /> : <input type="number" step={kind === 'integer' ? 1 : 'any'} {...common} />}
          </div>
        );
      })}
      {free ? <div class="field"><label for="arg-raw">arguments (JSON)</label><textarea id="arg-raw" rows={4} spellcheck={false} value={raw} onInput={(e) => setRaw((e.currentTarget as HTMLTextAreaElement).value)} /></div> : null}
      {names.length === 0 && !free ? <p class="muted">This tool takes no arguments.</p> : null}
      {error ? <p class="error">{error}</p> : null}
      <button type="submit" disabled={busy}>{busy ? 'calling…' : submitLabel}</button>
    </form>
  );
}
