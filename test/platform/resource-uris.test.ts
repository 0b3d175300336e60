/**
 * How a session names its servers' resources (resource-uris.ts): `subako-mcp://<server>/<the server's URI>`,
 * reversible without decoding anything, so that no server can name another's resource and templates keep working.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSessionResourceUri, resourceNaming, sessionResourceUri } from '../../src/platform/calls/resource-uris.js';

describe('session resource URIs', () => {
  it('put the server\'s URI, unchanged, after the server\'s name, and give it back the same', () => {
    for (const uri of ['file:///a/b.txt', 'https://x.example/p?q=1#f', 'doc://a%2Fb', 'urn:isbn:0451450523', 'subako-mcp://other/x']) {
      const named = sessionResourceUri('docs', uri);
      assert.equal(named, `subako-mcp://docs/${uri}`);
      assert.deepEqual(parseSessionResourceUri(named), { server: 'docs', uri });
    }
  });

  it('a server\'s URI naming another server stays the first server\'s', () => {
    assert.deepEqual(parseSessionResourceUri(sessionResourceUri('a', 'subako-mcp://b/x')), { server: 'a', uri: 'subako-mcp://b/x' });
  });

  it('a template keeps working: the prefix followed by the server\'s own expansion', () => {
    const template = sessionResourceUri('wiki', 'wiki://pages/{title}{?rev}');
    const expanded = template.replace('{title}', 'Ada%20Lovelace').replace('{?rev}', '?rev=2');
    assert.deepEqual(parseSessionResourceUri(expanded), { server: 'wiki', uri: 'wiki://pages/Ada%20Lovelace?rev=2' });
  });

  it('is not fooled by other schemes, missing parts, names outside the rule, or an unusable URI after them', () => {
    for (const uri of [
      'file:///a', 'subako-mcp://docs', 'subako-mcp://docs/', 'subako-mcp://Docs/a://b', 'subako-mcp://do.cs/a://b', 'subako-mcp://docs:80/a://b',
      'subako-mcp:///a://b', 'subako-mcp://docs/no scheme', 'subako-mcp://docs/a://b\nc', 'SUBAKO-MCP://docs/a://b', `subako-mcp://${'a'.repeat(65)}/a://b`,
    ]) assert.equal(parseSessionResourceUri(uri), undefined, uri);
    assert.throws(() => sessionResourceUri('Bad.Name', 'a://b'), /not a remote MCP server's name/);
  });
});

describe('resourceNaming: verbatim for one remote server, prefixed for several', () => {
  it('one server: URIs as the server wrote them, each one that is relayable read from that server', () => {
    const naming = resourceNaming(['wiki']);
    assert.equal(naming.verbatim, true);
    assert.equal(naming.served('wiki', 'wiki://pages/{title}'), 'wiki://pages/{title}');
    assert.deepEqual(naming.parse('wiki://home'), { server: 'wiki', uri: 'wiki://home' });
    assert.deepEqual(naming.parse('subako-mcp://other/x://y'), { server: 'wiki', uri: 'subako-mcp://other/x://y' });
    assert.equal(naming.parse('no scheme'), undefined);
  });

  it('several servers (or none): the subako-mcp:// prefix, so no server can name another\'s resource', () => {
    for (const servers of [['docs', 'wiki'], []]) {
      const naming = resourceNaming(servers);
      assert.equal(naming.verbatim, false);
      assert.equal(naming.served('docs', 'doc://a'), 'subako-mcp://docs/doc://a');
      assert.deepEqual(naming.parse('subako-mcp://wiki/wiki://home'), { server: 'wiki', uri: 'wiki://home' });
      assert.equal(naming.parse('doc://a'), undefined);
    }
  });
});
