/**
 * An OTLP/HTTP trace receiver on loopback, as a collector would be: it takes POST /v1/traces in either encoding
 * (protobuf, the default, or JSON), parses each ExportTraceServiceRequest and keeps its spans and the encodings
 * it was sent.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeTraceRequest } from './otlp-protobuf.js';

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
  /** The content type of each export it took. */
  encodings: string[];
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
  const encodings: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        assert.equal(req.method, 'POST');
        assert.equal(req.url, '/v1/traces');
        const type = String(req.headers['content-type']).split(';')[0].trim();
        assert.ok(type === 'application/json' || type === 'application/x-protobuf', `an OTLP content type: ${type}`);
        const raw = Buffer.concat(chunks);
        const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        spans.push(...spansOf(type === 'application/json' ? JSON.parse(body.toString('utf8')) : decodeTraceRequest(body)));
        encodings.push(type);
        // An empty ExportTraceServiceResponse in the request's encoding (zero bytes is one in protobuf).
        res.setHeader('content-type', type);
        res.end(type === 'application/json' ? '{}' : '');
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
    spans, encodings, unreadable,
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
