/**
 * A request to a remote MCP server as a span: a client span under the call's trace context, whose own
 * `traceparent` is what the server receives in the request's `_meta`, so the server's spans are its children.
 * Named as OpenTelemetry's MCP conventions name a client request (`tools/call <tool>`); the server is named by
 * host and port only (its URL may be a capability).
 */
import { SpanKind, startSpan, type Traced } from '../common/index.js';

export function upstreamSpan(method: string, target: string, serverUrl: string, traceparent: string | undefined): Traced {
  let server: { 'server.address'?: string; 'server.port'?: number } = {};
  try {
    const url = new URL(serverUrl);
    server = { 'server.address': url.hostname, 'server.port': url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80 };
  } catch {
    // Not a URL: the span goes without the server's name.
  }
  return startSpan(`${method} ${target}`, traceparent, { 'mcp.method.name': method, 'gen_ai.tool.name': target, ...server }, SpanKind.CLIENT);
}
