/**
 * `subako mcp call` answers a tool's input requests from `--answer KEY=JSON` (MCP 2026-07-28 multi-round-trip
 * input): the answer reaches the tool and its result is printed; a request no answer names ends the call with
 * exit 2 and one line saying which flag answers it. `--no-check` sends arguments the tool's schema refuses, for the
 * server to judge, where the default refuses them first (exit 2, nothing sent).
 * The server is `mcp.serve` of tools written with the library; the CLI is the real command.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mcp, defineTool, ToolInputRequiredError, formElicitation, acceptedContent } from '../../src/mcp/index.js';
import { runCli } from './helpers/cli.js';

let url: string;
let stop: () => void;
let served: Promise<unknown>;
const received: unknown[] = [];

const nameForm = formElicitation({ message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } });

before(async () => {
  const tools = {
    greet: defineTool({
      name: 'greet', description: 'Asks for a name, then greets it.', inputSchema: { type: 'object', properties: {} },
      handler: (_args, ctx) => {
        const content = acceptedContent(ctx.input?.responses?.who);
        if (content) return `Hello, ${String(content.name)}!`;
        throw new ToolInputRequiredError('needs a name', { who: nameForm });
      },
    }),
    count: defineTool({
      name: 'count', description: 'Echoes n.', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
      handler: (args) => { received.push(args); return `n is ${JSON.stringify((args as { n?: unknown }).n)}`; },
    }),
  };
  await new Promise<void>((ready) => {
    served = mcp.serve(tools, (address, signal) => {
      url = address;
      ready();
      return new Promise((resolve) => { stop = resolve as () => void; signal.addEventListener('abort', () => resolve(undefined), { once: true }); });
    });
  });
});

after(async () => {
  stop();
  await served;
  await mcp.close();
});

describe('subako mcp call with input requests and --no-check', () => {
  it('--answer gives the tool its answer and the result is printed; without one, exit 2 naming the flag', async () => {
    const answered = await runCli(['mcp', 'call', '--url', url, 'greet', '{}', '--answer', 'who={"action":"accept","content":{"name":"Ada"}}']);
    assert.equal(answered.code, 0, answered.stderr);
    assert.match(answered.stdout, /Hello, Ada!/);
    const unanswered = await runCli(['mcp', 'call', '--url', url, 'greet']);
    assert.equal(unanswered.code, 2, unanswered.stderr);
    assert.equal(unanswered.stderr,
      'subako: tool "greet" needs input "who" (a form elicitation: "Your name?"); answer it with --answer who=\'<JSON>\' ' +
      '(for a form: \'{"action":"accept","content":{…}}\', or "decline")\n');
    const bad = await runCli(['mcp', 'call', '--url', url, 'greet', '--answer', 'who=yes']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--answer who: the answer is not JSON/);
  });

  it('--no-check sends what the schema refuses and the server answers; by default it is refused before sending', async () => {
    const checked = await runCli(['mcp', 'call', '--url', url, 'count', '{"n":"three"}']);
    assert.equal(checked.code, 2, checked.stderr);
    assert.deepEqual(received, [], 'nothing was sent');
    // The library's tool checks its own schema too, so the server refuses it: the call went out and came back a tool error.
    const unchecked = await runCli(['mcp', 'call', '--url', url, 'count', '{"n":"three"}', '--no-check']);
    assert.notEqual(unchecked.code, 2, `sent, not refused by the command line: ${unchecked.stderr}`);
    const fine = await runCli(['mcp', 'call', '--url', url, 'count', '{"n":3}', '--no-check']);
    assert.equal(fine.code, 0, fine.stderr);
    assert.match(fine.stdout, /n is 3/);
  });
});
