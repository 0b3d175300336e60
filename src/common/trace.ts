/**
 * Spans, as every room makes them: a call, its guest's run, each egress request, each request to a remote MCP
 * server. Only OpenTelemetry's API is used here; whether anything is recorded and exported is decided once, at
 * `serve`/`worker` start (telemetry/), by registering a tracer provider. Until one is registered every span is the
 * API's no-op one: nothing is recorded, and the trace context passed on is the one that came in.
 *
 * The trace context travels as a W3C `traceparent` string (ToolCallContext.traceparent): the one source of it.
 * A span is started under the `traceparent` it is given, and what it passes on to whatever it calls is its own
 * (`Traced.traceparent`), so the next span — in this process, in a worker over NATS, at a remote server — is its
 * child. The string is taken, not the ambient context, because the call's path crosses what an ambient context
 * does not follow (the sandbox's bridge messages, the NATS bus).
 */
import {
  context, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace,
  type Attributes, type Context, type Span, type SpanContext,
} from '@opentelemetry/api';

export { SpanKind };
export type { Attributes, Span };

/** The instrumentation scope every span of subako's is made under. */
const TRACER_NAME = 'subako';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A started span, the context to run its work in, and the `traceparent` its children go under. */
export interface Traced {
  span: Span;
  /** The span's own context when it is a real one; the parent's when the span is the no-op one; absent when neither. */
  traceparent: string | undefined;
  context: Context;
}

/** A remote parent from a `traceparent` already checked to be one (version 00, as mcp/'s reader passes it on). */
function parentContext(traceparent: string | undefined): Context {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!match) return context.active();
  const parent: SpanContext = { traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16), isRemote: true };
  return trace.setSpanContext(ROOT_CONTEXT, parent);
}

/** A span context as the `traceparent` it is sent as. */
function traceparentOf(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * Starts a span under `traceparent` (the ambient context when absent). Its end is the caller's: `span.end()`,
 * after `endWithError` when it failed.
 */
export function startSpan(name: string, traceparent: string | undefined, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): Traced {
  const parent = parentContext(traceparent);
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { kind, attributes }, parent);
  const own = span.spanContext();
  return { span, traceparent: isSpanContextValid(own) ? traceparentOf(own) : traceparent, context: trace.setSpan(parent, span) };
}

/** Runs `work` with the span as the ambient one: the log lines it writes carry its ids. */
export function inSpan<T>(traced: Traced, work: () => T): T {
  return context.with(traced.context, work);
}

/** Marks the span failed, with one line saying why (`error.type` as OpenTelemetry's conventions name it). */
export function markFailed(span: Span, type: string, message?: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message !== undefined ? { message } : {}) });
}

/** The ids of the ambient span, for a log line: none when no span is being recorded. */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const active = trace.getActiveSpan()?.spanContext();
  if (active === undefined || !isSpanContextValid(active)) return {};
  return { trace_id: active.traceId, span_id: active.spanId };
}
