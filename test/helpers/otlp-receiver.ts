/**
 * An OTLP/HTTP trace receiver on loopback, as a collector would be: it takes POST /v1/traces in the JSON encoding
 * (what @opentelemetry/exporter-trace-otlp-http sends), parses each ExportTraceServiceRequest and keeps its spans.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A span as the OTLP/JSON encoding carries it (ids in hex), with its resource's service name. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number };
  service: unknown;
}

/** OTLP's span kinds, as numbers on the wire. */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 };

export interface OtlpReceiver {
  /** The base endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** What it was sent that it could not read: none expected. */
  unreadable: string[];
  close(): Promise<void>;
}

/** OTLP's attribute list as a record of plain values. */
function attributesOf(list: { key: string; value: Record<string, unknown> }[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    const [kind] = Object.keys(value);
    out[key] = kind === 'intValue' ? Number(value[kind]) : value[kind];
  }
  return out;
}

/** An ExportTraceServiceRequest (OTLP/JSON) as the spans it carries. */
function spansOf(body: unknown): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of (body as { resourceSpans: { resource?: { attributes?: never }; scopeSpans: { spans: Record<string, never>[] }[] }[] }).resourceSpans) {
    const service = attributesOf(rs.resource?.attributes)['service.name'];
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        spans.push({
          traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind,
          attributes: attributesOf(s.attributes), status: s.status, service,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const unreadable: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        assert.equal(req.method, 'POST');
        assert.equal(req.url, '/v1/traces');
        assert.match(String(req.headers['content-type']), /^application\/json/);
        const raw = Buffer.concat(chunks);
        spans.push(...spansOf(JSON.parse((req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'))));
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      } catch (err) {
        unreadable.push(String(err));
        res.statusCode = 400;
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans, unreadable,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The one span named `name` whose parent is `parent`. */
export function spanUnder(spans: readonly ReceivedSpan[], name: string, parent: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name && s.parentSpanId === parent);
  assert.equal(found.length, 1, `one span ${name} under ${parent}: ${JSON.stringify(spans.map((s) => [s.name, s.spanId, s.parentSpanId]))}`);
  return found[0];
}
