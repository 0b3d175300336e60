// A toolbox served with mcp.serve whose tools carry the names and results the official conformance
// suite (@modelcontextprotocol/conformance) asks a server under test to implement, so its tools-*
// scenarios exercise subako's own serving path (defineTool -> toolbox handler) rather than fail on
// "Unknown tool". Prints the URL on stdout and serves until killed. Needs a built dist/.
import { mcp } from '../dist/src/index.js';

const { defineTool } = await import('../dist/src/mcp/index.js');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
// A 44-byte WAV header with no samples: the smallest valid audio/wav.
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';
const none = { type: 'object', properties: {} };
const resource = { type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } };

const tools = {
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

await mcp.serve(tools, async (url, signal) => {
  process.stdout.write(`${url}\n`);
  await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
}, { port: Number(process.env.PORT ?? 0) }).catch((err) => { console.error(err); process.exit(1); });
