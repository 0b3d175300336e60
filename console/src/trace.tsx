// One call's trace: what was asked, what the model was shown, what the guest printed, every HTTP request.
import { useEffect, useState } from 'preact/hooks';
import type { AgentCallView, CallResult, CallView, EgressView } from './api';
import { Json, Outcome, When } from './components';
import { HeldCall } from './held-call';
import { linkProps } from './router';

/** A URL as shown: the query's values are left out (a guest may put a token there), its names kept. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const names = [...parsed.searchParams.keys()];
    parsed.search = '';
    return names.length ? `${parsed.toString()}?${names.map((n) => `${encodeURIComponent(n)}=…`).join('&')}` : parsed.toString();
  } catch {
    return url.replace(/\?.*$/, '?…');
  }
}

/** An image block's bytes as an object URL (the CSP allows blob: images, not data: ones). */
function BlobImage({ data, mimeType }: { data: string; mimeType: string }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    const url = URL.createObjectURL(new Blob([bytes], { type: /^image\/(png|jpeg|gif|webp)$/.test(mimeType) ? mimeType : 'application/octet-stream' }));
    setSrc(url);
    return () => URL.revokeObjectURL(url);
  }, [data, mimeType]);
  // A thumbnail (style.css bounds it); the link opens it whole.
  return src ? <a class="thumbnail" href={src} target="_blank" rel="noopener"><img class="model-image" src={src} alt={`an image (${mimeType})`} /></a> : null;
}

/** How a held call was decided, for audit: how it was asked, the decision, who decided and when, and why. */
function ApprovalRecord({ approval }: { approval: NonNullable<CallView['approval']> }) {
  return (
    <dl class="facts approval-record" data-decision={approval.decision}>
      <dt>decision</dt><dd class="approval-decision">{approval.decision}</dd>
      <dt>asked</dt><dd>{approval.asked === 'api' ? 'an operator, through the API or the console' : "the end user, through the MCP client's elicitation"}</dd>
      {approval.decided_by ? <><dt>decided by</dt><dd>API key <code class="approval-decided-by">{approval.decided_by}</code></dd></> : null}
      {approval.decided_at ? <><dt>decided at</dt><dd class="approval-decided-at"><When iso={approval.decided_at} /></dd></> : null}
      {approval.reason ? <><dt>reason</dt><dd class="approval-reason">{approval.reason}</dd></> : null}
    </dl>
  );
}

const LINK = /^\[link: (.*) <([^<>]*)>\]$/s;
const NOTE = /^\[.*(was left out|were left out).*\]$/s;

/** A block of the call log's copy of what the model saw (the API declares them only as JSON values). */
function asBlock(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { value };
}

/** One block the model saw: text, an image, a link, or a note that something was left out. */
function ModelBlock({ block }: { block: Record<string, unknown> }) {
  if (block.type === 'image') {
    if (typeof block.data === 'string') return <BlobImage data={block.data} mimeType={String(block.mimeType)} />;
    const kib = typeof block.bytes === 'number' ? `${(block.bytes / 1024).toFixed(1)} KiB` : '';
    return <p class="block-image">image {String(block.mimeType ?? '')} {kib} <code class="muted">sha256 {String(block.sha256 ?? '').slice(0, 16)}…</code></p>;
  }
  if (block.type === 'text' && typeof block.text === 'string') {
    const link = LINK.exec(block.text);
    if (link) {
      const [, name, uri] = link;
      const safe = /^https:\/\//.test(uri);
      return <p class="block-link">link: {safe ? <a href={uri} rel="noopener noreferrer nofollow" target="_blank">{name}</a> : <span>{name}</span>} <code>{shownUrl(uri)}</code></p>;
    }
    if (NOTE.test(block.text)) return <p class="block-note">note: {block.text.slice(1, -1)}</p>;
    // The start of a text the call log cut (the caller received all of it; the note after it says how much).
    if (block.truncated === true) return <><pre class="block-text">{block.text}</pre><p class="block-note">note: the call log keeps only the start of this text</p></>;
    return <pre class="block-text">{block.text}</pre>;
  }
  return <Json value={block} />;
}

function EgressTable({ egress }: { egress: EgressView[] }) {
  if (egress.length === 0) return <p class="muted">no HTTP requests</p>;
  return (
    <table class="egress">
      <thead><tr><th>method</th><th>URL</th><th>status</th><th>duration</th><th>bytes in / out</th></tr></thead>
      <tbody>
        {egress.map((e, i) => (
          <tr key={i} class={e.error ? 'refused' : ''}>
            <td>{e.method}</td>
            <td><code>{e.url ? shownUrl(e.url) : '(not a URL)'}</code></td>
            <td>{e.error ? <span class="refusal">refused: {e.error}</span> : e.status ?? ''}</td>
            <td>{Math.round(e.durationMs)} ms</td>
            <td>{e.bytesIn} / {e.bytesOut}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * `result`: the live result of a call just made. Only its images' bytes are used (the record keeps their
 * digest): everything else is shown from the record, which the call log redacted of the session's secrets.
 */
export function Trace({ call, result }: { call: CallView | AgentCallView; result?: CallResult }) {
  const blocks = call.model.map(asBlock).map((block, i) => {
    const live = result?.content?.[i];
    return block.type === 'image' && live?.type === 'image' && typeof live.data === 'string' ? { ...block, data: live.data } : block;
  });
  return (
    <article class="trace" data-call-id={call.id}>
      <header class="trace-head">
        <h3><code>{call.tool}</code> <Outcome outcome={call.outcome} /></h3>
        <dl class="facts">
          <dt>call</dt><dd><code>{call.id}</code></dd>
          <dt>duration</dt><dd>{call.duration_ms === null ? '…' : `${call.duration_ms} ms`}</dd>
          <dt>started</dt><dd><When iso={call.started_at} /></dd>
          <dt>via</dt><dd>{call.via}</dd>
          {call.worker ? <><dt>worker</dt><dd class="worker"><code>{call.worker.id}</code> on <code>{call.worker.host}</code></dd></> : null}
          <dt>session</dt><dd><a {...linkProps(`/sessions/${call.session_id}`)}><code>{call.session_id}</code></a></dd>
          {'agent_id' in call ? <><dt>agent</dt><dd><a {...linkProps(`/agents/${call.agent_id}`)}><code>{call.agent_id}</code></a></dd></> : null}
        </dl>
      </header>
      {call.crash ? <p class="crash"><strong>{call.outcome === 'unknown' ? 'outcome unknown' : 'crash'}: {call.crash.reason}</strong> — {call.crash.message}</p> : null}
      {call.lease_lapsed ? <p class="lease-lapsed"><strong>lease lapsed</strong> — {call.lease_lapsed.note}</p> : null}
      <h4>Arguments</h4>
      {/* Held for approval, the call log's copy (keys that look secret hidden, deep or large ones cut) is not what an approver must read. */}
      {call.approval?.decision === 'pending' && call.outcome === 'running'
        ? <HeldCall sessionId={call.session_id} approvalId={call.approval.id} />
        : <Json value={call.arguments} />}
      {call.approval ? <><h4>Approval</h4><ApprovalRecord approval={call.approval} /></> : null}
      <h4>What the model saw</h4>
      <div class="model">{call.outcome === 'running' ? <p class="muted">running…</p> : blocks.map((b, i) => <ModelBlock key={i} block={b} />)}</div>
      <h4>stderr (last 4 KiB)</h4>
      {call.stderr_tail ? <pre class="stderr">{call.stderr_tail}</pre> : <p class="muted">nothing on stderr</p>}
      <h4>HTTP requests</h4>
      <EgressTable egress={call.egress} />
    </article>
  );
}
