// Calls, live: the calls of every session, newest first, kept current by the call stream, each opening to its
// trace. The list loads a page at a time (a page ends at 200 calls or 1 MiB, whichever comes first); "load older
// calls" follows the page's cursor, so every call can be reached.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, OUTCOMES, query, type AgentCallView, type AgentView, type Page } from '../api';
import { ErrorLine, Outcome, useLoad } from '../components';
import { followCalls } from '../sse';
import { linkProps } from '../router';
import { Trace } from '../trace';

interface Filters {
  agent: string;
  session: string;
  tool: string;
  status: string;
}

const PAGE = 200;

/** A session id as the list shows it: its prefix and its random end, enough to tell sessions apart (the title has it whole). */
const shortSession = (id: string): string => (id.length > 14 ? `${id.slice(0, 4)}…${id.slice(-6)}` : id);

/** A start as the list shows it: the time, and the date only when it is not today (the title has it whole). */
function startedText(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const time = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return date.toDateString() === new Date().toDateString() ? time : `${date.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
}

/**
 * What the list keeps of a call: its row. The trace loads the whole call when it is opened, so a page left open
 * while the stream brings calls in holds a few hundred bytes for each, not its arguments and result.
 */
interface CallRow extends Pick<AgentCallView, 'id' | 'tool' | 'outcome' | 'duration_ms' | 'via' | 'started_at' | 'agent_id' | 'session_id'> {
  requests: number;
  refused: boolean;
}

const rowOf = (call: AgentCallView): CallRow => ({
  id: call.id, tool: call.tool, outcome: call.outcome, duration_ms: call.duration_ms, via: call.via, started_at: call.started_at,
  agent_id: call.agent_id, session_id: call.session_id,
  requests: call.egress.length, refused: call.egress.some((e) => e.error),
});

/** A newer word on a call replaces the older; a `running` event never replaces its end. */
function merge(rows: CallRow[], call: AgentCallView): CallRow[] {
  const at = rows.findIndex((c) => c.id === call.id);
  if (at < 0) return [rowOf(call), ...rows].sort((a, b) => (a.id < b.id ? 1 : -1));
  if (call.outcome === 'running' && rows[at].outcome !== 'running') return rows;
  const next = rows.slice();
  next[at] = rowOf(call);
  return next;
}

export function CallsPage({ selected }: { selected: string | null }) {
  const [filters, setFilters] = useState<Filters>({ agent: '', session: '', tool: '', status: '' });
  const [calls, setCalls] = useState<CallRow[]>([]);
  /** The cursor of the oldest page loaded: null when there is nothing older, undefined before the first page. */
  const [older, setOlder] = useState<string | null | undefined>(undefined);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [state, setState] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const agents = useLoad(() => api<Page<AgentView>>('GET', '/v1/agents?limit=200'), []);
  const agentNames = new Map((agents.data?.items ?? []).map((a) => [a.id, a.name]));
  const filterQuery = query({ ...filters });
  const [generation, setGeneration] = useState(0);
  /** Which list a page answers (the filters and the reloads so far): an answer for an older one is dropped. */
  const listing = useRef('');
  listing.current = `${filterQuery}#${generation}`;

  // Other filters, another list. (A reset of the stream reloads the first page into the list it has.)
  useEffect(() => setCalls([]), [filterQuery]);

  useEffect(() => {
    let live = true;
    // Calls the stream brings while the list loads are kept: the two are merged by id.
    setOlder(undefined);
    api<Page<AgentCallView>>('GET', `/v1/calls${query({ ...filters, limit: String(PAGE) })}`).then((page) => {
      if (!live) return;
      setCalls((current) => page.items.reduce(merge, current));
      setOlder(page.next_cursor);
    }, (e) => live && setError(e));
    return () => { live = false; };
  }, [filterQuery, generation]);

  const loadOlder = () => {
    if (!older || loadingOlder) return;
    const asked = listing.current;
    setLoadingOlder(true);
    api<Page<AgentCallView>>('GET', `/v1/calls${query({ ...filters, limit: String(PAGE), after: older })}`).then((page) => {
      if (listing.current !== asked) return;
      setCalls((current) => page.items.reduce(merge, current));
      setOlder(page.next_cursor);
    }, setError).finally(() => setLoadingOlder(false));
  };

  // The open call, loaded whole; the stream's later word on it replaces it (a running call that ends).
  const [open, setOpen] = useState<AgentCallView | null>(null);
  const openId = useRef<string | null>(null);
  openId.current = selected;
  useEffect(() => {
    setOpen(null);
    if (selected) {
      api<AgentCallView>('GET', `/v1/calls/${encodeURIComponent(selected)}`)
        .then((call) => openId.current === call.id && setOpen((current) => current ?? call), setError);
    }
  }, [selected]);

  useEffect(() => followCalls(`/v1/calls/stream${filterQuery}`, {
    onCall: (call) => {
      setCalls((current) => merge(current, call));
      if (call.id === openId.current) setOpen((current) => (call.outcome === 'running' && current && current.outcome !== 'running' ? current : call));
    },
    onReset: () => setGeneration((g) => g + 1),
    onState: setState,
  }), [filterQuery]);

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
            {/* Fixed widths: the list fits its half of the page, a long name ends in an ellipsis (its title has it whole). */}
            <colgroup><col class="c-started" /><col class="c-tool" /><col class="c-agent" /><col class="c-session" /><col class="c-outcome" /><col class="c-duration" /><col class="c-egress" /></colgroup>
            <thead><tr><th>started</th><th>tool</th><th>agent</th><th>session</th><th>outcome</th><th>duration</th><th title="HTTP requests">HTTP</th></tr></thead>
            <tbody>
              {calls.map((c) => {
                const agentName = agentNames.get(c.agent_id) ?? c.agent_id;
                return (
                  <tr key={c.id} class={c.id === selected ? 'selected' : ''} data-call-id={c.id}>
                    <td><a {...linkProps(`/calls/${c.id}`)} title={`${c.started_at} via ${c.via}`}><time dateTime={c.started_at}>{startedText(c.started_at)}</time></a></td>
                    <td class="cut" title={c.tool}><code>{c.tool}</code></td>
                    <td class="cut call-agent" title={`${agentName} (${c.agent_id})`}><a {...linkProps(`/agents/${c.agent_id}`)}>{agentName}</a></td>
                    <td class="cut call-session" title={c.session_id}><a {...linkProps(`/sessions/${c.session_id}`)}><code>{shortSession(c.session_id)}</code></a></td>
                    <td class="cut" title={c.outcome}><Outcome outcome={c.outcome} /></td>
                    <td>{c.duration_ms === null ? '…' : `${c.duration_ms} ms`}</td>
                    <td title={c.refused ? 'a request was refused' : undefined}>{c.requests ? `${c.requests}${c.refused ? '!' : ''}` : ''}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        {older ? (
          <p class="more"><button type="button" class="small" disabled={loadingOlder} onClick={loadOlder}>{loadingOlder ? 'loading…' : 'load older calls'}</button></p>
        ) : null}
      </div>
      <div class="calls-detail">
        {open ? <Trace call={open} /> : <p class="muted">{selected ? 'Loading the call…' : 'Choose a call to see its trace.'}</p>}
      </div>
    </div>
  );
}
