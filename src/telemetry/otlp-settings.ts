/**
 * Where traces go, read from OpenTelemetry's standard variables (the OTLP exporter specification): nothing set,
 * nothing exported. Pure: the environment in, the settings out.
 *
 * - OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the URL spans are POSTed to, as it is;
 *   else OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended.
 * - OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over it: `name=value` pairs, comma
 *   separated, values percent-encoded (an API key for a hosted collector).
 * - OTEL_SERVICE_NAME: the `service.name` of the spans; the process's own name otherwise.
 * - OTEL_SDK_DISABLED=true: nothing exported, whatever else is set.
 * - OTEL_BSP_SCHEDULE_DELAY: milliseconds between two exports (5000 by default).
 * - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` (the specification's
 *   default, and what every collector takes) or `http/json`. `grpc` is refused with a message saying what to set:
 *   subako speaks OTLP over HTTP only, and exporting nothing while a person believes traces are flowing is worse
 *   than not starting.
 */
import { SubakoError } from '../errors.js';

/** The OTLP/HTTP encodings subako exports in. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** An OTLP variable set to something subako cannot honour. */
export class OtlpSettingsError extends SubakoError {
  constructor(message: string) {
    super('telemetry.unsupported_setting', message);
  }
}

export interface OtlpSettings {
  /** The URL spans are sent to. */
  url: string;
  /** Sent with each export; values may be secrets: never logged. */
  headers: Record<string, string>;
  serviceName: string;
  /** Milliseconds between two batches. */
  exportEveryMs: number;
  /** How spans are encoded on the wire. */
  protocol: OtlpProtocol;
}

const DEFAULT_EXPORT_EVERY_MS = 5000;

/** The headers of an OTLP header variable; a pair without `=` or a name is skipped, as the SDKs do. */
export function parseOtlpHeaders(value: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (value ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim().toLowerCase();
    if (name === '') continue;
    let text = pair.slice(at + 1).trim();
    try {
      text = decodeURIComponent(text);
    } catch {
      // Not percent-encoded after all: taken as it is.
    }
    headers[name] = text;
  }
  return headers;
}

/** The URL for traces under a base endpoint: `<base>/v1/traces`, one slash between. */
function tracesUnder(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** The encoding the environment asks for: the traces variable over the general one, protobuf when neither is set. */
function protocolOf(env: NodeJS.ProcessEnv): OtlpProtocol {
  const variable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = env[variable]?.trim().toLowerCase() || 'http/protobuf';
  if ((OTLP_PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
  throw new OtlpSettingsError(
    `${variable}=${JSON.stringify(env[variable]!.trim())} is not an OTLP protocol subako exports in: set http/protobuf (the default) ` +
    `or http/json, with the endpoint at the collector's OTLP/HTTP port (4318 by default)`,
  );
}

/**
 * The export settings the environment asks for, or null when it asks for none. Throws OtlpSettingsError for a
 * protocol it cannot export in.
 */
export function otlpSettings(env: NodeJS.ProcessEnv, defaultServiceName: string): OtlpSettings | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = traces ? traces : base ? tracesUnder(base) : null;
  if (url === null) return null;
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  return {
    url,
    headers: { ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName,
    exportEveryMs: Number.isFinite(delay) && delay > 0 ? delay : DEFAULT_EXPORT_EVERY_MS,
    protocol: protocolOf(env),
  };
}
