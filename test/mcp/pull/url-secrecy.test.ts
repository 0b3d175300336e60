import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { mintToken } from '../../../src/mcp/capability-router.js';
import { describePullCommand } from '../../../src/mcp/pull/command-line.js';
import { generateBindings } from '../../../src/mcp/pull/generate.js';
import { checkUrlVariable, classifyServerUrl, urlVariableFor } from '../../../src/mcp/pull/url-secrecy.js';

describe('url-secrecy: which server URLs may be written into a generated file', () => {
  const publicUrls = [
    'http://127.0.0.1:8080/mcp',
    'https://mcp.example.com/',
    'https://api.example.com/v1/mcp',
    'https://example.com/server-everything/mcp',
    'http://[::1]:3000/mcp',
    'https://example.com/2025-06-18/Mcp',
  ];
  for (const url of publicUrls) {
    test(`public: ${url}`, () => assert.deepEqual(classifyServerUrl(url), { secret: false, reasons: [] }));
  }

  const secretUrls: Array<[string, RegExp]> = [
    [`http://127.0.0.1:8080/mcp/${mintToken()}`, /path/],
    ['https://example.com/mcp?key=abc', /query/],
    ['https://example.com/mcp?', /query/],
    ['https://user:pass@example.com/mcp', /user-info/],
    ['https://example.com/mcp#frag', /fragment/],
    [`https://example.com/mcp/${randomBytes(16).toString('hex')}`, /path/],
    [`https://example.com/s/${randomUUID()}/mcp`, /path/],
    ['https://example.com/a1B2-c3D4-e5F6-g7H8/mcp', /path/],
    ['https://example.com/mcp/%41%42', /path/],
    [`https://${randomBytes(10).toString('hex')}.tunnel.example/mcp`, /host/],
  ];
  for (const [url, reason] of secretUrls) {
    test(`secret: ${url.replace(/\/\/.*$/, '//…')} (${reason.source})`, () => {
      const verdict = classifyServerUrl(url);
      assert.equal(verdict.secret, true);
      assert.ok(verdict.reasons.some((r) => reason.test(r)), verdict.reasons.join('; '));
    });
  }

  test('subako capability URLs are always secret (a thousand minted tokens)', () => {
    for (let i = 0; i < 1000; i++) assert.equal(classifyServerUrl(`http://127.0.0.1:1/mcp/${mintToken()}`).secret, true);
  });

  test('the variable is named after the output file, and user-given names are checked', () => {
    assert.equal(urlVariableFor('src/github-tools.ts'), 'SUBAKO_GITHUB_TOOLS_URL');
    assert.equal(urlVariableFor('tools.mts'), 'SUBAKO_TOOLS_URL');
    assert.equal(urlVariableFor('---.ts'), 'SUBAKO_MCP_URL');
    assert.equal(checkUrlVariable('MY_URL'), 'MY_URL');
    assert.throws(() => checkUrlVariable('my-url; rm -rf'), /not an environment variable name/);
  });
});

describe('generateBindings with a secret URL', () => {
  const token = mintToken();
  const url = `http://127.0.0.1:9/mcp/${token}`;
  const tools = [{ name: 'echo', inputSchema: { type: 'object' } }];

  test('neither the file nor its header holds the URL, even from a caller-written command line', () => {
    const text = generateBindings({ url, tools, command: `subako mcp pull --url ${url} --out t.ts`, authenticated: false, urlVariable: 'SUBAKO_T_URL' });
    assert.ok(!text.includes(token));
    assert.match(text, /--url "\$SUBAKO_T_URL" --out t\.ts/);
    assert.match(text, /^export const URL_VARIABLE = "SUBAKO_T_URL";$/m);
    assert.match(text, /^export function connect\(url: string = urlFromEnvironment\(\)\): Tools \{$/m, 'a capability URL takes no auth');
    assert.ok(!/mcp\.call\(\{[^}]*auth/.test(text), 'no auth is sent');
  });

  test('a secret URL pulled with auth keeps the auth argument and reads the URL from the variable', () => {
    const text = generateBindings({ url: 'https://example.com/mcp?key=k3y', tools, command: 'x', authenticated: true });
    assert.ok(!text.includes('k3y'));
    assert.match(text, /^export function connect\(auth: McpAuth, url: string = urlFromEnvironment\(\)\): Tools \{$/m);
    assert.match(text, /URL_VARIABLE = "SUBAKO_MCP_URL"/);
  });

  test('a public URL stays the default, and keepUrlOut removes it', () => {
    const plain = generateBindings({ url: 'http://127.0.0.1:9/mcp', tools, command: 'x' });
    assert.match(plain, /^export function connect\(auth: McpAuth, url: string = "http:\/\/127\.0\.0\.1:9\/mcp"\): Tools \{$/m);
    const noAuth = generateBindings({ url: 'http://127.0.0.1:9/mcp', tools, command: 'x', authenticated: false });
    assert.match(noAuth, /connect\(auth: McpAuth = mcp\.headers\(\{\}\), url: string = "http/);
    const kept = generateBindings({ url: 'http://127.0.0.1:9/mcp', tools, command: 'x', keepUrlOut: true });
    assert.ok(!kept.includes('127.0.0.1:9'));
  });

  test('the recorded command names the variable in place of a secret URL', () => {
    assert.equal(
      describePullCommand({ url, out: 't.ts', urlVariable: 'SUBAKO_T_URL' }),
      'subako mcp pull --url "$SUBAKO_T_URL" --out t.ts',
    );
    assert.equal(describePullCommand({ url: 'http://h/mcp', out: 't.ts' }), 'subako mcp pull --url http://h/mcp --out t.ts');
  });
});
