/**
 * telemetry/: the process's traces exported over OTLP, set up by the composition root at `serve`/`worker` start.
 * The spans themselves are made by each room through common/'s trace.ts (OpenTelemetry's API only); this room
 * is the one place the SDK and the exporter are.
 */
export { startTraces, type Traces } from './traces.js';
export { otlpSettings, parseOtlpHeaders, OtlpSettingsError, OTLP_PROTOCOLS, type OtlpSettings, type OtlpProtocol } from './otlp-settings.js';
