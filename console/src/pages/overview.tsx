// Overview: the call log over the last hour (by minute) or the last day (by hour) — calls and errors per bucket
// as bars, and per tool and per agent their calls, errors and p50/p95 duration (GET /v1/calls/stats, counted by
// the database) — and the calls that wait for an operator's approval now.
import { useEffect, useState } from 'preact/hooks';
import { api, type AgentView, type ApprovalView, type CallStatsRowView, type CallStatsView, type Page } from '../api';
import { BarChart } from '../chart';
import { ErrorLine, Section, useLoad, When } from '../components';
import { linkProps } from '../router';

type Window = CallStatsView['window'];

/** Counts go stale: read again this often while the page is open. */
const REFRESH_MS = 30_000;

function StatsTable({ rows, name, what }: { rows: CallStatsRowView[]; name: (key: string) => preact.ComponentChildren; what: string }) {
  if (rows.length === 0) return <p class="muted">No calls in this window.</p>;
  return (
    <table class={`list stats stats-${what}`}>
      <thead><tr><th>{what}</th><th>calls</th><th>errors</th><th>p50</th><th>p95</th></tr></thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} data-key={r.key}>
            <td>{name(r.key)}</td>
            <td class="n-calls">{r.calls}</td>
            <td class={`n-errors${r.errors ? ' error' : ''}`}>{r.errors}</td>
            <td class="p50">{r.p50_ms === null ? '—' : `${r.p50_ms} ms`}</td>
            <td class="p95">{r.p95_ms === null ? '—' : `${r.p95_ms} ms`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function OverviewPage() {
  const [window, setWindow] = useState<Window>('hour');
  const stats = useLoad(() => api<CallStatsView>('GET', `/v1/calls/stats?window=${window}`), [window]);
  const agents = useLoad(() => api<Page<AgentView>>('GET', '/v1/agents?limit=200'), []);
  const held = useLoad(() => api<Page<ApprovalView>>('GET', '/v1/approvals?limit=32'), []);
  useEffect(() => {
    const timer = setInterval(() => { stats.reload(); held.reload(); }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [window]);
  const agentNames = new Map((agents.data?.items ?? []).map((a) => [a.id, a.name]));
  const data = stats.data;
  const total = data ? data.buckets.reduce((n, b) => n + b.calls, 0) : 0;
  const errors = data ? data.buckets.reduce((n, b) => n + b.errors, 0) : 0;
  const tick = (start: string) => {
    const d = new Date(start);
    return window === 'hour' ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleTimeString([], { hour: '2-digit' });
  };
  const perMinute = data ? total / ((Date.parse(data.until) - Date.parse(data.since)) / 60_000) : 0;
  return (
    <div class="overview">
      <Section title="Calls" actions={
        <p class="tabs">
          {(['hour', 'day'] as const).map((w) => (
            <button key={w} type="button" class={w === window ? 'small active' : 'small'} aria-pressed={w === window} onClick={() => setWindow(w)}>last {w}</button>
          ))}{' '}
          <button type="button" class="small" onClick={() => { stats.reload(); held.reload(); }}>refresh</button>
        </p>
      }>
        <ErrorLine error={stats.error} />
        {data ? (
          <>
            <p class="totals">
              <strong class="total-calls">{total}</strong> calls, <strong class="total-errors">{errors}</strong> errors in the last {window}
              {' '}(<span class="per-minute">{perMinute.toFixed(perMinute < 10 ? 2 : 0)}</span> a minute on average) · each bar {window === 'hour' ? 'a minute' : 'an hour'}, errors in red
            </p>
            <BarChart bars={data.buckets} tick={tick} label={`calls per ${window === 'hour' ? 'minute over the last hour' : 'hour over the last day'}`} />
            <div class="stats-grid">
              <div><h4>By tool</h4><StatsTable rows={data.by_tool} what="tool" name={(k) => <code>{k}</code>} /></div>
              <div><h4>By agent</h4><StatsTable rows={data.by_agent} what="agent" name={(k) => <a {...linkProps(`/agents/${k}`)}>{agentNames.get(k) ?? k}</a>} /></div>
            </div>
            <p class="muted">Errors: calls that ended tool_error, crash, unknown or invalid_arguments. p50/p95: of the calls that ended, by nearest rank.</p>
          </>
        ) : <p class="muted">Loading…</p>}
      </Section>
      <Section title="Waiting for approval">
        <ErrorLine error={held.error} />
        {held.data && held.data.items.length === 0 ? <p class="muted">Nothing waits for an operator.</p> : null}
        <table class="list">
          <tbody>
            {(held.data?.items ?? []).map((h) => (
              <tr key={h.id} data-approval-id={h.id}>
                <td><a {...linkProps(`/calls/${h.call_id}`)}><code>{h.tool}</code></a></td>
                <td>session <a {...linkProps(`/sessions/${h.session_id}`)}><code>{h.session_id}</code></a></td>
                <td>until <When iso={h.expires_at} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </div>
  );
}
