/**
 * A real MCP server (the v2 server SDK, `createMcpHandler`) whose tools answer large results, served twice on one
 * loopback port: at `/json` every answer is one JSON response, at `/sse` an SSE stream (Streamable HTTP allows
 * either). Tools:
 * - `huge`: a text of `hugeBytes`;
 * - `big`: a text of `bigBytes` with characters JSON escapes (quotes, newlines) and non-ASCII ones, the same every time (`bigText`);
 * - `chatty`: sends `chattyEvents` progress notifications of 60 KiB each (when the call asked for progress), then answers "done";
 * - `small`: answers "ok".
 * What the server writes of each `huge` answer is watched: the bytes its HTTP response took from the SDK's body
 * (with backpressure: as the client reads), whether the response was cancelled before it was all written. And
 * the handshakes it answered are counted: each new client connection opens with one.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

export interface WrittenAnswer {
  /** Bytes of the SDK's response body. */
  total: number;
  /** Bytes the HTTP response took of it. */
  written: number;
  cancelled: boolean;
  done: boolean;
}

export interface LargeAnswerServer {
  url(mode: 'json' | 'sse'): string;
  /** Every `huge` answer so far, in order. */
  hugeAnswers: WrittenAnswer[];
  /** `server/discover` and `initialize` requests answered so far. */
  handshakes(): number;
  stop(): Promise<void>;
}

const LINE = 'line "quoted" \\ with é and ✓\n';

/** The `big` tool's text: `bytes` of UTF-8. */
export function bigText(bytes: number): string {
  const whole = LINE.repeat(Math.ceil(bytes / Buffer.byteLength(LINE)));
  return Buffer.from(whole).subarray(0, bytes).toString('utf8').replace(/\uFFFD$/, '');
}

const PIECE = 64 * 1024;

/** The body read on demand, in 64 KiB pieces, so that what is written follows what the client reads. */
function watched(body: ReadableStream<Uint8Array>, answer: WrittenAnswer): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let pending: Uint8Array = new Uint8Array(0);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending.byteLength === 0) {
        const next = await reader.read();
        if (next.done) {
          answer.done = true;
          controller.close();
          return;
        }
        pending = next.value;
        answer.total += next.value.byteLength;
      }
      const piece = pending.subarray(0, PIECE);
      pending = pending.subarray(PIECE);
      answer.written += piece.byteLength;
      controller.enqueue(piece);
    },
    async cancel(reason) {
      answer.cancelled = true;
      await reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

export async function startLargeAnswerServer(sizes: { hugeBytes: number; bigBytes: number; chattyEvents?: number }): Promise<LargeAnswerServer> {
  const huge = 'x'.repeat(sizes.hugeBytes);
  const big = bigText(sizes.bigBytes);
  const chatter = 'c'.repeat(60 * 1024);
  const factory = () => {
    const server = new McpServer({ name: 'large-answers', version: '1.0.0' });
    server.registerTool('huge', { description: 'A huge text.', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: huge }] }));
    server.registerTool('big', { description: 'A big text.', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: big }] }));
    server.registerTool('small', { description: 'A small text.', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    server.registerTool('chatty', { description: 'Much progress, then a small text.', inputSchema: z.object({}) }, async (_args, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        const events = sizes.chattyEvents ?? 0;
        for (let i = 1; i <= events; i++) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: events, message: chatter } });
        }
      }
      return { content: [{ type: 'text', text: 'done' }] };
    });
    return server;
  };
  const handlers = { json: createMcpHandler(factory, { responseMode: 'json' }), sse: createMcpHandler(factory, { responseMode: 'sse' }) };
  const hugeAnswers: WrittenAnswer[] = [];
  let handshakes = 0;
  const http = createServer(toNodeHandler({
    fetch: async (request: Request) => {
      const mode = new URL(request.url).pathname === '/sse' ? 'sse' : 'json';
      const body = request.method === 'POST' ? ((await request.clone().json().catch(() => undefined)) as { method?: string; params?: { name?: string } }) : undefined;
      if (body?.method === 'server/discover' || body?.method === 'initialize') handshakes += 1;
      const response = await handlers[mode].fetch(request);
      if (body?.method !== 'tools/call' || body.params?.name !== 'huge' || response.body === null) return response;
      const answer: WrittenAnswer = { total: 0, written: 0, cancelled: false, done: false };
      hugeAnswers.push(answer);
      return new Response(watched(response.body, answer), { status: response.status, headers: response.headers });
    },
  }));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: (mode) => `http://127.0.0.1:${port}/${mode}`,
    hugeAnswers,
    handshakes: () => handshakes,
    stop: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
