// A call held for an operator's approval: exactly what will run if it is approved, read from the held call itself
// (GET /v1/sessions/{id}/approvals/{approval_id}), not from the call log, whose copy hides values by their keys'
// names and cuts deep or large arguments. Only the session's vault secrets are hidden, at the places listed.
import { useState } from 'preact/hooks';
import { api, ApiError, type ApprovalDecided, type ApprovalDecisionInput, type HeldApprovalView } from './api';
import { ErrorLine, useLoad } from './components';

/**
 * JSON as a person should read it: indented, and every character that would not show as itself (bidirectional
 * overrides, invisible tag characters, zero-width and unusual spaces, controls) escaped as `\uXXXX`, so what is
 * shown parses back to exactly the arguments and cannot be made to look like something else.
 */
export function visibleJson(value: unknown): string {
  // The indentation's spaces and newlines are JSON's own (inside strings JSON.stringify escapes a newline itself).
  return (JSON.stringify(value, null, 2) ?? 'null').replace(/(?![ \n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Cs}\p{Co}\p{Cn}]/gu,
    (c) => Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''));
}

export function HeldCall({ sessionId, approvalId }: { sessionId: string; approvalId: string }) {
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(approvalId)}`;
  const held = useLoad(() => api<HeldApprovalView>('GET', path), [path]);
  const [deciding, setDeciding] = useState<ApprovalDecisionInput['decision'] | null>(null);
  const [decided, setDecided] = useState<ApprovalDecided['approval'] | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (held.error) return <ErrorLine error={held.error} />;
  if (!held.data) return <p class="muted">Loading what waits for approval…</p>;
  const { data } = held;
  return (
    <div class="held-call" data-approval-id={data.id}>
      <p class="held-note">
        Waiting for an operator's approval (until <time dateTime={data.expires_at}>{data.expires_at}</time>). Approved, <code>{data.tool}</code> runs
        with exactly these arguments:
      </p>
      <pre class="json held-arguments">{visibleJson(data.arguments)}</pre>
      {data.hidden_secrets.length > 0 ? (
        <p class="held-secrets">
          A secret of the session's vaults is shown as <code>[redacted]</code> at{' '}
          {data.hidden_secrets.map((p, i) => <span key={i}>{i > 0 ? ', ' : ''}<code>{visibleJson(p)}</code></span>)}: the tool receives the secret itself there.
        </p>
      ) : null}
      {decided ? (
        <p class="held-decided" role="status">{decided.decision === 'approved' ? 'Approved: the call runs now.' : 'Denied: the call ends without running.'}</p>
      ) : (
        <div class="held-actions">
          {(['approve', 'deny'] as const).map((decision) => (
            <button key={decision} type="button" class={decision === 'deny' ? 'danger' : ''} disabled={deciding !== null} onClick={async () => {
              setDeciding(decision);
              setError(null);
              try {
                const input: ApprovalDecisionInput = { decision };
                setDecided((await api<ApprovalDecided>('POST', path, input)).approval);
              } catch (err) {
                // A read-only key may look but not decide: said in words, not as a bare 403.
                setError(err instanceof ApiError && err.status === 403 ? new Error(`This API key cannot decide: an admin key approves or denies. (${err.message})`) : err);
                held.reload();
              } finally {
                setDeciding(null);
              }
            }}>{decision === 'approve' ? 'Approve' : 'Deny'}</button>
          ))}
          <ErrorLine error={error} />
        </div>
      )}
    </div>
  );
}
