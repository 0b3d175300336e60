/**
 * A session call's span: the root of what the call does in subako (its guest's run, its egress requests, its
 * request to a remote MCP server), under the trace context the client sent (`_meta.traceparent`), or the start
 * of a trace when it sent none. It carries what the call log records of the call: tool, agent, session, via,
 * the call's id, its outcome and a crash's reason.
 */
import { inSpan, markFailed, SpanKind, startSpan, type Traced } from '../../common/index.js';
import type { CallRecord, SessionRecord } from '../store/index.js';

export class CallSpan {
  private constructor(private readonly traced: Traced) {}

  /** Starts the span of a call to `tool` under the caller's trace context. */
  static start(tool: string, session: SessionRecord, via: string, traceparent: string | undefined): CallSpan {
    return new CallSpan(startSpan(`tools/call ${tool}`, traceparent, {
      'subako.tool': tool, 'subako.agent': session.agentId, 'subako.session': session.id, 'subako.via': via,
      // OpenTelemetry's conventions for a tool call, beside subako's own names.
      'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'mcp.method.name': 'tools/call', 'mcp.session.id': session.id,
    }, SpanKind.SERVER));
  }

  /** The trace context of whatever the call does: this span's (or the caller's, when nothing is recorded). */
  get traceparent(): string | undefined {
    return this.traced.traceparent;
  }

  /** Runs the call in the span, so the log lines written meanwhile carry its ids; the span ends with it. */
  async around<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await inSpan(this.traced, work);
    } finally {
      this.traced.span.end();
    }
  }

  /** The call as recorded at its end. */
  recorded(record: CallRecord, replayed = false): void {
    const { span } = this.traced;
    span.setAttributes({ 'subako.call.id': record.id, 'subako.call.outcome': record.outcome, ...(replayed ? { 'subako.call.replayed': true } : {}) });
    if (record.crash) {
      span.setAttribute('subako.call.crash_reason', record.crash.reason);
      markFailed(span, record.crash.reason);
    }
  }

  /** A call refused before it was recorded (no turn, a person to ask first, the database out of reach). */
  refused(err: unknown): void {
    const code = (err as { code?: unknown } | null)?.code;
    this.traced.span.setAttribute('subako.call.outcome', 'not_recorded');
    markFailed(this.traced.span, typeof code === 'string' ? code : 'refused');
  }
}
