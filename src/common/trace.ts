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
import { createRequire } from 'node:module';
import type * as Otel from '@opentelemetry/api';
import type { Attributes, Context, Span, SpanContext } from '@opentelemetry/api';

export type { Attributes, Span };

/**
 * OpenTelemetry's API (some forty CommonJS files), loaded by the first span rather than with this file: every
 * room imports common/ as a process starts, and a fresh process's first span comes later — a CLI call's with
 * the call, once the sandbox process is already booting — so the load is off the path to the first answer.
 * It is the same module (and the same global tracer provider) that telemetry/ registers through.
 */
let loaded: typeof Otel | undefined;
function otel(): typeof Otel {
  loaded ??= createRequire(import.meta.url)('@opentelemetry/api') as typeof Otel;
  return loaded;
}

/**
 * The kinds of span, with OpenTelemetry's numbers (its `SpanKind`), as values of our own, so that naming a kind
 * loads nothing (test/common/trace.test.ts holds them to the API's).
 */
export const SpanKind = Object.freeze({
  INTERNAL: 0 as Otel.SpanKind.INTERNAL,
  SERVER: 1 as Otel.SpanKind.SERVER,
  CLIENT: 2 as Otel.SpanKind.CLIENT,
  PRODUCER: 3 as Otel.SpanKind.PRODUCER,
  CONSUMER: 4 as Otel.SpanKind.CONSUMER,
});
export type SpanKind = Otel.SpanKind;

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
  const { context, trace, ROOT_CONTEXT } = otel();
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
  const { trace, isSpanContextValid } = otel();
  const parent = parentContext(traceparent);
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { kind, attributes }, parent);
  const own = span.spanContext();
  return { span, traceparent: isSpanContextValid(own) ? traceparentOf(own) : traceparent, context: trace.setSpan(parent, span) };
}

/** Runs `work` with the span as the ambient one: the log lines it writes carry its ids. */
export function inSpan<T>(traced: Traced, work: () => T): T {
  return otel().context.with(traced.context, work);
}

/** Marks the span failed, with one line saying why (`error.type` as OpenTelemetry's conventions name it). */
export function markFailed(span: Span, type: string, message?: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: otel().SpanStatusCode.ERROR, ...(message !== undefined ? { message } : {}) });
}

/** The ids of the ambient span, for a log line: none when no span is being recorded. */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const { trace, isSpanContextValid } = otel();
  const active = trace.getActiveSpan()?.spanContext();
  if (active === undefined || !isSpanContextValid(active)) return {};
  return { trace_id: active.traceId, span_id: active.spanId };
}
