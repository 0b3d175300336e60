/**
 * Where traces go, from OpenTelemetry's standard variables: nothing set, nothing exported; the traces endpoint as
 * it is, the base endpoint with /v1/traces; headers from both variables, the traces one over the other.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { otlpSettings, parseOtlpHeaders, OtlpSettingsError } from '../../src/telemetry/index.js';

describe('OTLP export settings', () => {
  it('nothing set, or the SDK disabled: nothing exported', () => {
    assert.equal(otlpSettings({}, 'subako'), null);
    assert.equal(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, 'subako'), null);
    assert.equal(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }, 'subako'), null);
  });

  it('the base endpoint gets /v1/traces; the traces endpoint wins and is taken as it is', () => {
    assert.equal(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'subako')?.url, 'http://collector:4318/v1/traces');
    assert.equal(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp' }, 'subako')?.url, 'http://collector:4318/otlp/v1/traces');
    assert.equal(otlpSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/ingest',
    }, 'subako')?.url, 'https://traces.example/ingest');
  });

  it('the service name from OTEL_SERVICE_NAME, else the process\'s own; the batch delay from OTEL_BSP_SCHEDULE_DELAY', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    assert.equal(otlpSettings(base, 'subako-worker')?.serviceName, 'subako-worker');
    assert.equal(otlpSettings({ ...base, OTEL_SERVICE_NAME: 'gateway-eu' }, 'subako')?.serviceName, 'gateway-eu');
    assert.equal(otlpSettings(base, 'subako')?.exportEveryMs, 5000);
    assert.equal(otlpSettings({ ...base, OTEL_BSP_SCHEDULE_DELAY: '250' }, 'subako')?.exportEveryMs, 250);
    assert.equal(otlpSettings({ ...base, OTEL_BSP_SCHEDULE_DELAY: 'soon' }, 'subako')?.exportEveryMs, 5000);
  });

  it('headers: name=value pairs, percent-decoded, the traces variable over the general one; malformed pairs skipped', () => {
    assert.deepEqual(parseOtlpHeaders('Api-Key=abc%3D%3D, x-team = blue ,novalue,=x'), { 'api-key': 'abc==', 'x-team': 'blue' });
    assert.deepEqual(otlpSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=general,x-a=1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=traces',
    }, 'subako')?.headers, { 'api-key': 'traces', 'x-a': '1' });
  });

  it('the encoding: protobuf by default, http/json when asked, the traces variable over the general one; grpc refused saying what to set', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    assert.equal(otlpSettings(base, 'subako')?.protocol, 'http/protobuf');
    assert.equal(otlpSettings({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON ' }, 'subako')?.protocol, 'http/json');
    assert.equal(otlpSettings({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }, 'subako')?.protocol, 'http/protobuf');
    assert.throws(() => otlpSettings({ ...base, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, 'subako'), (err: unknown) => {
      assert.ok(err instanceof OtlpSettingsError);
      assert.equal(err.code, 'telemetry.unsupported_setting');
      assert.equal(err.message, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="grpc" is not an OTLP protocol subako exports in: set http/protobuf (the default) or http/json, with the endpoint at the collector\'s OTLP/HTTP port (4318 by default)');
      return true;
    });
    // Nothing exported: a protocol nobody asked to use is not checked.
    assert.equal(otlpSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'subako'), null);
  });
});
