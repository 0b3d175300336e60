// Calls, live: the latest calls of every session, kept current by the call stream, each opening to its trace.
import { useEffect, useState } from 'preact/hooks';
import { api, OUTCOMES, query, type CallView, type Page } from '../api';
import { ErrorLine, Outcome, useLoad, When } from '../components';
import { followCalls } from '../sse';
import { linkProps } from '../router';
import { Trace } from '../trace';

interface Filters {
  agent: string;
  session: string;
  tool: string;
  status: string;
}

const SHOWN = 200;

/** A newer word on a call replaces the older; a `running` event never replaces its end. */
function merge(calls: CallView[], call: CallView): CallView[] {
  const at = calls.findIndex((c) => c.id === call.id);
  if (at < 0) return [call, ...calls].sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, SHOWN);
  if (call.outcome === 'running' && calls[at].outcome !== 'running') return calls;
  const next = calls.slice();
  next[at] = call;
  return next;
}

export function CallsPage({ selected }: { selected: string | null }) {
  const [filters, setFilters] = useState<Filters>({ agent: '', session: '', tool: '', status: '' });
  const [calls, setCalls] = useState<CallView[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [state, setState] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const agents = useLoad(() => api<Page<{ id: string; name: string }>>('GET', '/v1/agents?limit=200'), []);
  const filterQuery = query({ ...filters });
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let live = true;
    // Calls the stream brings while the list loads are kept: the two are merged by id.
    if (generation === 0) setCalls([]);
    api<Page<CallView>>('GET', `/v1/calls${query({ ...filters, limit: String(SHOWN) })}`)
      .then((page) => live && setCalls((current) => page.items.reduce(merge, current)), (e) => live && setError(e));
    return () => { live = false; };
  }, [filterQuery, generation]);

  useEffect(() => followCalls(`/v1/calls/stream${filterQuery}`, {
    onCall: (call) => setCalls((current) => merge(current, call as CallView)),
    onReset: () => setGeneration((g) => g + 1),
    onState: setState,
  }), [filterQuery]);

  const fromList = selected ? calls.find((c) => c.id === selected) ?? null : null;
  const [fetched, setFetched] = useState<CallView | null>(null);
  useEffect(() => {
    setFetched(null);
    if (selected && !fromList) api<CallView>('GET', `/v1/calls/${encodeURIComponent(selected)}`).then(setFetched, setError);
  }, [selected]);
  const open = fromList ?? fetched;

  const field = (name: keyof Filters) => ({
    value: filters[name],
    onChange: (e: Event) => setFilters({ ...filters, [name]: (e.currentTarget as HTMLInputElement).value.trim() }),
  });

  return (
    <div class="calls-page">
      <div class="calls-list">
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <label>agent <select {...field('agent')} name="agent">
            <option value="">all</option>
            {(agents.data?.items ?? []).map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select></label>
          <label>session <input {...field('session')} name="session" placeholder="ses_…" /></label>
          <label>tool <input {...field('tool')} name="tool" placeholder="any" /></label>
          <label>status <select {...field('status')} name="status">
            <option value="">any</option>
            {OUTCOMES.map((o) => <option key={o} value={o}>{o}</option>)}
          </select></label>
          <span class={`stream-state stream-${state}`} aria-live="polite">{state}</span>
        </form>
        <ErrorLine error={error} />
        {calls.length === 0 ? <p class="muted">No calls yet. Start a session and call a tool (Sessions).</p> : (
          <table class="list calls">
            <thead><tr><th>started</th><th>tool</th><th>outcome</th><th>duration</th><th>via</th><th>egress</th></tr></thead>
            <tbody>
              {calls.map((c) => (
                <tr key={c.id} class={c.id === selected ? 'selected' : ''} data-call-id={c.id}>
                  <td><a {...linkProps(`/calls/${c.id}`)}><When iso={c.started_at} /></a></td>
                  <td><code>{c.tool}</code></td>
                  <td><Outcome outcome={c.outcome} /></td>
                  <td>{c.duration_ms === null ? '…' : `${c.duration_ms} ms`}</td>
                  <td>{c.via}</td>
                  <td>{c.egress.length ? `${c.egress.length}${c.egress.some((e) => e.error) ? ' (refused)' : ''}` : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <div class="calls-detail">
        {open ? <Trace call={open} /> : <p class="muted">{selected ? 'Loading the call…' : 'Choose a call to see its trace.'}</p>}
      </div>
    </div>
  );
}
