/**
 * The process's traces, set up once at `serve`/`worker` start: when the environment names an OTLP endpoint
 * (otlp-settings.ts), a tracer provider is registered that batches spans and POSTs them there over OTLP/HTTP
 * (protobuf, or JSON when asked), with the ambient context carried across awaits (AsyncLocalStorage) so a log line knows its call's span.
 * Without one nothing is registered: every span stays OpenTelemetry's no-op one and costs next to nothing.
 *
 * `close()` exports what is left and unregisters the provider (so a later start in the same process, a test's,
 * registers its own).
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { SUBAKO_VERSION } from '../version.js';
import { otlpSettings } from './otlp-settings.js';

export interface Traces {
  /** Where spans are sent (no headers: they may hold a key); null when nothing is exported. */
  readonly exportingTo: string | null;
  /** Sends the spans ended so far now, rather than with the next batch. */
  flush(): Promise<void>;
  /** Sends what is left and stops tracing in this process. */
  close(): Promise<void>;
}

const NOT_EXPORTING: Traces = { exportingTo: null, flush: async () => undefined, close: async () => undefined };

/** One exporting provider per process: a second start while one runs leaves the first in place. */
let registered: TracerProvider | null = null;

/**
 * Starts exporting traces when `env` asks for it; `serviceName` when OTEL_SERVICE_NAME does not name one. Throws
 * OtlpSettingsError for a protocol it cannot export in (before anything is registered).
 */
export function startTraces(env: NodeJS.ProcessEnv, serviceName: string): Traces {
  const settings = otlpSettings(env, serviceName);
  if (settings === null || registered !== null) return NOT_EXPORTING;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: SUBAKO_VERSION }),
    spanProcessors: [new BatchSpanProcessor({
      exporter: settings.protocol === 'http/json'
        ? new JsonTraceExporter({ url: settings.url, headers: settings.headers })
        : new ProtobufTraceExporter({ url: settings.url, headers: settings.headers }),
      scheduledDelayMillis: settings.exportEveryMs,
    })],
  });
  const contexts = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contexts);
  trace.setGlobalTracerProvider(provider);
  registered = provider;
  let closing: Promise<void> | null = null;
  return {
    exportingTo: settings.url,
    flush: () => provider.forceFlush(),
    close: () => closing ??= provider.shutdown().finally(() => {
      trace.disable();
      context.disable();
      registered = null;
    }),
  };
}
