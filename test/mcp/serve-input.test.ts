/**
 * Issue 27 point 10 (and 2, 8): input requests asked by what `mcp.serve` serves. A defineTool handler asks through
 * `ctx.input` (ToolInputRequiredError) for a person's answer, a model completion and the client's roots, and reads
 * the answers and its own state back on the retry; the state travels sealed (it opens only for the same tool and
 * arguments, and an altered one is refused before the handler runs); a kind of input the request did not declare is
 * answered -32021 with HTTP 400; a definePrompt asks the same way; a 2025-era client, which cannot be asked, gets a
 * result saying what input was needed.
 *
 * Real parts only: `mcp.serve` on loopback and the official clients (v2 auto-fulfilling and manual; v1 for 2025).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  mcp, defineTool, definePrompt, ToolInputRequiredError, formElicitation, samplingRequest, rootsRequest, acceptedContent, type ServedToolbox,
} from '../../src/mcp/index.js';

const none = { type: 'object', properties: {} } as const;
const nameForm = formElicitation({ message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } });
/** Each run of `plan`'s handler: the state it was given back. */
const planRuns: (string | undefined)[] = [];

const plan = defineTool({
  name: 'plan', description: 'Two rounds: a name, a model completion and the roots, then a confirmation.', inputSchema: { type: 'object', properties: { trip: { type: 'string' } } },
  handler: (args, ctx) => {
    planRuns.push(ctx.input?.requestState);
    const responses = ctx.input?.responses ?? {};
    if (ctx.input?.requestState === undefined) {
      throw new ToolInputRequiredError('needs three answers', {
        who: nameForm,
        idea: samplingRequest({ messages: [{ role: 'user', content: { type: 'text', text: `Plan ${String(args.trip)}` } }], maxTokens: 20 }),
        where: rootsRequest(),
      }, 'round-1 \u00e9');
    }
    if (ctx.input.requestState === 'round-1 \u00e9') {
      const name = acceptedContent(responses.who)?.name;
      const idea = (responses.idea as { content?: { text?: string } } | undefined)?.content?.text;
      const roots = (responses.where as { roots?: unknown[] } | undefined)?.roots?.length;
      throw new ToolInputRequiredError('needs a confirmation', {
        sure: formElicitation({ message: 'Sure?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }),
      }, JSON.stringify({ name, idea, roots }));
    }
    const kept = JSON.parse(ctx.input.requestState) as { name: string; idea: string; roots: number };
    return `${kept.name} plans ${kept.idea} over ${kept.roots} root(s): ${acceptedContent(responses.sure)?.ok === true ? 'confirmed' : 'not confirmed'}`;
  },
});
const needsModel = defineTool({
  name: 'needs_model', description: 'Asks the client\'s model.', inputSchema: none,
  handler: (_args, ctx) => {
    if (ctx.input?.responses?.model !== undefined) return 'answered';
    throw new ToolInputRequiredError('needs a completion', { model: samplingRequest({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }) });
  },
});
const contextual = definePrompt({
  name: 'contextual', description: 'Asks for context first.',
  get: (_args, ctx) => {
    const content = acceptedContent(ctx.input?.responses?.context);
    if (content) return `Context: ${String(content.text)}`;
    throw new ToolInputRequiredError('needs context', { context: formElicitation({ message: 'Context?', requestedSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }) });
  },
});
const served: ServedToolbox = { plan, needs_model: needsModel, contextual };

/** The official v2 client declaring form elicitation, sampling and roots (or `declare`), answering each by `answers`. */
async function connect(url: string, options: { manual?: boolean; declare?: Record<string, object> } = {}): Promise<Client> {
  const client = new Client({ name: 'serve-input-test', version: '1.0.0' }, {
    versionNegotiation: { mode: 'auto' },
    capabilities: options.declare ?? { elicitation: { form: {} }, sampling: {}, roots: {} },
    ...(options.manual ? { inputRequired: { autoFulfill: false } } : {}),
  });
  const declared = options.declare ?? { elicitation: {}, sampling: {}, roots: {} };
  if (declared.elicitation) client.setRequestHandler('elicitation/create', async (request) => {
    const message = (request.params as { message: string }).message;
    return { action: 'accept', content: message === 'Sure?' ? { ok: true } : message === 'Context?' ? { text: 'a test' } : { name: 'Ada' } } as never;
  });
  if (declared.sampling) client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'a walk' }, model: 'm', stopReason: 'endTurn' }) as never);
  if (declared.roots) client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///a', name: 'a' }, { uri: 'file:///b', name: 'b' }] }) as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content.map((b) => b.text).join('');
type Asked = { resultType: string; inputRequests: Record<string, { method: string }>; requestState: string };

describe('input requests asked by what mcp.serve serves', () => {
  it('a tool asks for a person\'s answer, a completion and the roots, then again, and reads its own state back each round', async () => {
    planRuns.length = 0;
    await mcp.serve(served, async (url) => {
      const client = await connect(url);
      try {
        const result = await client.callTool({ name: 'plan', arguments: { trip: 'Kyoto' } });
        assert.equal(text(result), 'Ada plans a walk over 2 root(s): confirmed');
        assert.deepEqual(planRuns, [undefined, 'round-1 \u00e9', JSON.stringify({ name: 'Ada', idea: 'a walk', roots: 2 })]);
      } finally {
        await client.close();
      }
    });
  });

  it('the client carries the state sealed; altered, moved to other arguments or to another tool, it is refused before the tool runs', async () => {
    await mcp.serve(served, async (url) => {
      const manual = await connect(url, { manual: true });
      try {
        const first = await manual.callTool({ name: 'plan', arguments: { trip: 'Oslo' } }, { allowInputRequired: true }) as unknown as Asked;
        assert.equal(first.resultType, 'input_required');
        assert.deepEqual(Object.keys(first.inputRequests).sort(), ['idea', 'where', 'who']);
        assert.match(first.requestState, /^subako-sealed:v1:/);
        assert.ok(!first.requestState.includes('round-1'), 'the tool\'s own state is not shown to the client');
        const answers = { who: { action: 'accept', content: { name: 'Bo' } }, idea: { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' }, where: { roots: [] } };
        const retry = (name: string, args: Record<string, unknown>, requestState: string) =>
          manual.callTool({ name, arguments: args, inputResponses: answers, requestState } as never, { allowInputRequired: true });
        // The genuine state opens: the tool asks its second round.
        assert.equal((await retry('plan', { trip: 'Oslo' }, first.requestState) as unknown as Asked).resultType, 'input_required');
        planRuns.length = 0;
        const at = first.requestState.length - 3;
        const altered = `${first.requestState.slice(0, at)}${first.requestState[at] === 'A' ? 'B' : 'A'}${first.requestState.slice(at + 1)}`;
        const refused = (err: unknown) => err instanceof ProtocolError && err.code === -32602 && /Invalid requestState/.test(err.message);
        await assert.rejects(retry('plan', { trip: 'Oslo' }, altered), refused);
        await assert.rejects(retry('plan', { trip: 'Oslo' }, 'round-1 \u00e9'), refused);
        await assert.rejects(retry('plan', { trip: 'Rome' }, first.requestState), (err: unknown) => refused(err) && /another request/.test((err as Error).message));
        await assert.rejects(retry('needs_model', {}, first.requestState), refused);
        assert.deepEqual(planRuns, [], 'no refused retry reached the tool');
      } finally {
        await manual.close();
      }
    });
  });

  it('a kind of input the request did not declare is answered -32021 naming it, with HTTP 400', async () => {
    await mcp.serve(served, async (url) => {
      const client = await connect(url, { declare: { elicitation: { form: {} } } });
      try {
        await assert.rejects(client.callTool({ name: 'needs_model', arguments: {} }), (err: unknown) => {
          assert.ok(err instanceof ProtocolError, String(err));
          assert.equal(err.code, -32021);
          assert.deepEqual((err.data as { requiredCapabilities?: unknown }).requiredCapabilities, { sampling: {} });
          return true;
        });
      } finally {
        await client.close();
      }
      // The same request as bytes on the wire: the status is 400.
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'needs_model' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'needs_model', arguments: {}, _meta: meta } }),
      });
      const body = await response.json() as { error?: { code: number } };
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(body.error?.code, -32021);
    });
  });

  it('a prompt asks its client for input as a tool does', async () => {
    await mcp.serve(served, async (url) => {
      const client = await connect(url);
      try {
        const prompt = await client.getPrompt({ name: 'contextual' });
        assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'Context: a test' } }]);
      } finally {
        await client.close();
      }
    });
  });

  it('a 2025-era client, which cannot be asked, gets a result saying what input was needed', async () => {
    await mcp.serve(served, async (url) => {
      const legacy = new LegacyClient({ name: 'legacy', version: '1.0.0' });
      await legacy.connect(new LegacyTransport(new URL(url)));
      try {
        const result = await legacy.callTool({ name: 'needs_model', arguments: {} });
        assert.equal(result.isError, true);
        assert.match(text(result), /needs input its caller cannot give: a model completion \(sampling\)/);
      } finally {
        await legacy.close();
      }
    });
  });
});
