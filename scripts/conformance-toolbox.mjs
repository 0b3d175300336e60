// A toolbox served with mcp.serve that has what the official conformance suite (@modelcontextprotocol/conformance)
// asks a server under test to implement — its tools, resources, resource template, prompts and completion, under
// the names and with the results its scenarios read — written with subako's library as a user would: defineTool,
// defineResource, definePrompt, and for multi-round-trip input ctx.input with ToolInputRequiredError (mcp.serve
// seals the requestState and refuses an altered one; it answers -32021 when a tool asks for a kind of input the
// client did not declare). So the server scenarios exercise subako's own serving path, and a session proxying this
// toolbox exercises the session's. Prints the URL on stdout and serves until killed. Needs a built dist/.
import {
  mcp, defineTool, defineResource, definePrompt, ToolInputRequiredError, formElicitation, samplingRequest, rootsRequest, acceptedContent, ChangeFeed,
} from '../dist/src/index.js';
// Where the toolbox announces its list changes: clients listening (subscriptions/listen) hear them.
const changes = new ChangeFeed();
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
// A 44-byte WAV header with no samples: the smallest valid audio/wav.
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';
const none = { type: 'object', properties: {} };
const resource = { type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } };

const tools = {
  // The suite calls these while it listens, and expects the list change on its stream.
  test_trigger_tool_change: defineTool({
    name: 'test_trigger_tool_change', description: 'Announces that the tools list changed.', inputSchema: none,
    handler: () => { changes.toolsChanged(); return 'tools list change announced'; },
  }),
  test_trigger_prompt_change: defineTool({
    name: 'test_trigger_prompt_change', description: 'Announces that the prompts list changed.', inputSchema: none,
    handler: () => { changes.promptsChanged(); return 'prompts list change announced'; },
  }),
  test_simple_text: defineTool({ name: 'test_simple_text', description: 'Returns one text block.', inputSchema: none, handler: () => 'This is a simple text response for testing.' }),
  test_image_content: defineTool({ name: 'test_image_content', description: 'Returns one PNG image block.', inputSchema: none, handler: () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }) }),
  test_audio_content: defineTool({ name: 'test_audio_content', description: 'Returns one WAV audio block.', inputSchema: none, handler: () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }) }),
  test_embedded_resource: defineTool({ name: 'test_embedded_resource', description: 'Returns one embedded text resource.', inputSchema: none, handler: () => ({ content: [resource] }) }),
  test_multiple_content_types: defineTool({
    name: 'test_multiple_content_types',
    description: 'Returns text, image and resource blocks.',
    inputSchema: none,
    handler: () => ({ content: [{ type: 'text', text: 'Multiple content types test:' }, { type: 'image', data: PNG, mimeType: 'image/png' }, resource] }),
  }),
  test_error_handling: defineTool({ name: 'test_error_handling', description: 'Always fails, as a result with isError.', inputSchema: none, handler: () => { throw new Error('This tool intentionally returns an error for testing'); } }),
  test_tool_with_progress: defineTool({
    name: 'test_tool_with_progress',
    description: 'Reports progress three times when the call asks for it.',
    inputSchema: none,
    handler: async (_args, ctx) => {
      // ctx.progress lands with issue 13 point 3; without it the suite reports "No progress notifications".
      if (typeof ctx.progress === 'function') for (const done of [0, 50, 100]) await ctx.progress(done, 100, `step ${done}`);
      return 'progress done';
    },
  }),
  json_schema_2020_12_tool: defineTool({
    name: 'json_schema_2020_12_tool',
    description: 'Advertises a JSON Schema 2020-12 input schema ($defs, $ref, if/then/else).',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' }, contactMethod: { type: 'string', enum: ['phone', 'email'] }, phone: { type: 'string' }, email: { type: 'string' } },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
    handler: () => 'ok',
  }),
  // Both log through ctx.log, which exists only when the request asked for messages (a 2026-07-28 request's
  // io.modelcontextprotocol/logLevel; a 2025-era request gets info and above): the suite checks that no message
  // arrives for a 2026-07-28 request without a level, and that a 2025-era client gets them.
  test_logging_tool: defineTool({ name: 'test_logging_tool', description: 'Logs three messages at info.', inputSchema: none, handler: logThree }),
  test_tool_with_logging: defineTool({ name: 'test_tool_with_logging', description: 'Logs three messages at info.', inputSchema: none, handler: logThree }),
  test_header_echo: defineTool({
    name: 'test_header_echo',
    description: 'Takes region from the Mcp-Param-Region header (x-mcp-header).',
    inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, text: { type: 'string' } }, required: ['region'] },
    handler: (args) => `region ${args.region}`,
  }),
};

/** Three info messages, through the reporter the request gave (none when it asked for none). */
function logThree(_args, ctx) {
  for (const step of ['started', 'working', 'done']) ctx.log?.('info', `tool execution ${step}`);
  return 'done';
}


// A form elicitation of one string (or boolean) field.
const ask = (message, field, type = 'string') => formElicitation({ message, requestedSchema: { type: 'object', properties: { [field]: { type } }, required: [field] } });
const answered = (ctx, key) => ctx.input?.responses !== undefined && Object.hasOwn(ctx.input.responses, key) ? ctx.input.responses[key] : undefined;
const sampledText = (response) => (typeof response?.content?.text === 'string' ? response.content.text : 'no response');
const rootCount = (response) => (Array.isArray(response?.roots) ? response.roots.length : 0);
const state = (kind) => JSON.stringify({ kind });

const inputTools = {
  test_input_required_result_elicitation: defineTool({
    name: 'test_input_required_result_elicitation', description: 'Asks the person for their name, then greets them.', inputSchema: none,
    handler: (_args, ctx) => {
      const content = acceptedContent(answered(ctx, 'user_name'));
      if (content) return `Hello, ${String(content.name ?? 'friend')}!`;
      throw new ToolInputRequiredError('needs a name', { user_name: ask('What is your name?', 'name') });
    },
  }),
  test_input_required_result_sampling: defineTool({
    name: 'test_input_required_result_sampling', description: 'Asks the client\'s model a question.', inputSchema: none,
    handler: (_args, ctx) => {
      const sample = answered(ctx, 'sample_request');
      if (sample !== undefined) return `Sampling result: ${sampledText(sample)}`;
      throw new ToolInputRequiredError('needs a completion', {
        sample_request: samplingRequest({ messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 }),
      });
    },
  }),
  test_input_required_result_list_roots: defineTool({
    name: 'test_input_required_result_list_roots', description: 'Counts the client\'s roots.', inputSchema: none,
    handler: (_args, ctx) => {
      const roots = answered(ctx, 'roots_request');
      if (roots !== undefined) return `Found ${rootCount(roots)} root(s)`;
      throw new ToolInputRequiredError('needs the roots', { roots_request: rootsRequest() });
    },
  }),
  test_input_required_result_request_state: defineTool({
    name: 'test_input_required_result_request_state', description: 'Asks for a confirmation and keeps state across the round.', inputSchema: none,
    handler: (_args, ctx) => {
      if (ctx.input?.requestState === state('request-state') && acceptedContent(answered(ctx, 'confirm'))?.ok === true) return 'state-ok: requestState validated';
      throw new ToolInputRequiredError('needs a confirmation', { confirm: ask('Please confirm', 'ok', 'boolean') }, state('request-state'));
    },
  }),
  test_input_required_result_multiple_inputs: defineTool({
    name: 'test_input_required_result_multiple_inputs', description: 'Asks for a name, a greeting from the model and the roots at once.', inputSchema: none,
    handler: (_args, ctx) => {
      const [name, greeting, roots] = ['user_name', 'greeting', 'client_roots'].map((key) => answered(ctx, key));
      if (ctx.input?.requestState === state('multiple-inputs') && name !== undefined && greeting !== undefined && roots !== undefined) {
        return `Name: ${String(acceptedContent(name)?.name ?? 'friend')}; Greeting: ${sampledText(greeting)}; Roots: ${rootCount(roots)}`;
      }
      throw new ToolInputRequiredError('needs three answers', {
        user_name: ask('What is your name?', 'name'),
        greeting: samplingRequest({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }),
        client_roots: rootsRequest(),
      }, state('multiple-inputs'));
    },
  }),
  test_input_required_result_multi_round: defineTool({
    name: 'test_input_required_result_multi_round', description: 'Asks for a name, then a colour, in two rounds.', inputSchema: none,
    handler: (_args, ctx) => {
      // The state is this tool's own, sealed by mcp.serve: it reads back exactly what it gave.
      const previous = ctx.input?.requestState === undefined ? undefined : JSON.parse(ctx.input.requestState);
      const name = acceptedContent(answered(ctx, 'step1'))?.name;
      if (previous?.round === 1 && name !== undefined) {
        throw new ToolInputRequiredError('needs a colour', { step2: ask('Step 2: What is your favorite color?', 'color') }, JSON.stringify({ round: 2, name: String(name) }));
      }
      const color = acceptedContent(answered(ctx, 'step2'))?.color;
      if (previous?.round === 2 && color !== undefined) return `Multi-round complete for ${previous.name} who likes ${String(color)}`;
      throw new ToolInputRequiredError('needs a name', { step1: ask('Step 1: What is your name?', 'name') }, JSON.stringify({ round: 1 }));
    },
  }),
  test_input_required_result_tampered_state: defineTool({
    name: 'test_input_required_result_tampered_state', description: 'Asks for a confirmation; an altered state is refused by mcp.serve before this runs.', inputSchema: none,
    handler: (_args, ctx) => {
      if (ctx.input?.requestState === state('tamper-test') && answered(ctx, 'confirm') !== undefined) return 'integrity-ok: state verified';
      throw new ToolInputRequiredError('needs a confirmation', { confirm: ask('Please confirm', 'ok', 'boolean') }, state('tamper-test'));
    },
  }),
  test_input_required_result_capabilities: defineTool({
    name: 'test_input_required_result_capabilities', description: 'Asks only for the kinds of input the client declared.', inputSchema: none,
    handler: (_args, ctx) => {
      const responses = Object.keys(ctx.input?.responses ?? {});
      if (responses.length > 0) return `capabilities-ok: received ${responses.join(',')}`;
      const accepts = ctx.input?.accepts;
      const requests = {
        ...(accepts?.form ? { elicit_input: ask('Elicitation input', 'value') } : {}),
        ...(accepts?.sampling ? { sample_input: samplingRequest({ messages: [{ role: 'user', content: { type: 'text', text: 'Sample request' } }], maxTokens: 50 }) } : {}),
      };
      if (Object.keys(requests).length === 0) return 'No supported capabilities declared';
      throw new ToolInputRequiredError('needs input', requests, state('capabilities-test'));
    },
  }),
  // Needs a completion from the client's model: a client that did not declare sampling is answered -32021 by
  // mcp.serve (HTTP 400, data.requiredCapabilities), as the revision requires.
  test_missing_capability: defineTool({
    name: 'test_missing_capability', description: 'Needs the client\'s model (sampling).', inputSchema: none,
    handler: (_args, ctx) => {
      if (answered(ctx, 'model') !== undefined) return 'Success';
      throw new ToolInputRequiredError('needs a completion', { model: samplingRequest({ messages: [{ role: 'user', content: { type: 'text', text: 'Say yes' } }], maxTokens: 5 }) });
    },
  }),
  // Its question goes back on the request's own response stream (input_required), never as a request of the server's.
  test_streaming_elicitation: defineTool({
    name: 'test_streaming_elicitation', description: 'Asks the person a question on the response to its call.', inputSchema: none,
    handler: (_args, ctx) => {
      const content = acceptedContent(answered(ctx, 'answer'));
      if (content) return 'Streaming complete';
      throw new ToolInputRequiredError('needs an answer', { answer: ask('Continue?', 'ok', 'boolean') });
    },
  }),
};

const catalog = {
  'static-text': defineResource({
    uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource', description: 'A static text resource', mimeType: 'text/plain',
    read: () => 'This is the content of the static text resource.',
  }),
  'static-binary': defineResource({
    uri: 'test://static-binary', name: 'static-binary', title: 'Static Binary Resource', description: 'A PNG image', mimeType: 'image/png',
    read: () => Buffer.from(PNG, 'base64'),
  }),
  template: defineResource({
    uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template', description: 'Data for an id', mimeType: 'application/json',
    read: (uri, { id }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
    complete: { id: (value) => ['123', '456', '789'].filter((id) => id.startsWith(value)) },
  }),
  'watched-resource': defineResource({
    uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched Resource', description: 'A resource that may change', mimeType: 'text/plain',
    read: () => 'Watched resource content',
  }),
  test_simple_prompt: definePrompt({
    name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A simple prompt without arguments',
    get: () => 'This is a simple prompt for testing.',
  }),
  test_prompt_with_arguments: definePrompt({
    name: 'test_prompt_with_arguments', title: 'Prompt With Arguments', description: 'A prompt with required arguments',
    arguments: [{ name: 'arg1', description: 'First test argument', required: true }, { name: 'arg2', description: 'Second test argument', required: true }],
    get: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
    complete: { arg1: (value) => ['paris', 'park', 'party', 'test'].filter((word) => word.startsWith(value)) },
  }),
  test_prompt_with_embedded_resource: definePrompt({
    name: 'test_prompt_with_embedded_resource', title: 'Prompt With Embedded Resource', description: 'A prompt that embeds a resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    get: ({ resourceUri }) => [
      { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  }),
  test_prompt_with_image: definePrompt({
    name: 'test_prompt_with_image', title: 'Prompt With Image', description: 'A prompt that includes an image',
    get: () => [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }),
  // A prompt that asks its client for input before it answers (input_required on prompts/get).
  test_input_required_result_prompt: definePrompt({
    name: 'test_input_required_result_prompt', description: 'Asks the person for context, then answers with it',
    get: (_args, ctx) => {
      const content = acceptedContent(answered(ctx, 'user_context'));
      if (content) return `Prompt with context: ${String(content.context ?? '')}`;
      throw new ToolInputRequiredError('needs context', { user_context: ask('What context should the prompt use?', 'context') });
    },
  }),
};

await mcp.serve({ ...tools, ...inputTools, ...catalog }, async (url, signal) => {
  process.stdout.write(`${url}\n`);
  await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
}, { port: Number(process.env.PORT ?? 0), changes }).catch((err) => { console.error(err); process.exit(1); });
