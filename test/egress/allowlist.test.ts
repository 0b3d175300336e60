import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalHost, matchesAllowlist, parseAllowEntry } from '../../src/egress/index.js';

describe('allowlist: exact names', () => {
  it('an exact name admits that name on port 443 only', () => {
    assert.equal(matchesAllowlist('api.example.com', 443, ['api.example.com']), true);
    assert.equal(matchesAllowlist('api.example.com', 8443, ['api.example.com']), false);
    assert.equal(matchesAllowlist('other.example.com', 443, ['api.example.com']), false);
    assert.equal(matchesAllowlist('example.com', 443, ['api.example.com']), false);
    assert.equal(matchesAllowlist('xapi.example.com', 443, ['api.example.com']), false);
  });
  it('deny by default: an empty allowlist admits nothing', () => {
    assert.equal(matchesAllowlist('api.example.com', 443, []), false);
  });
  it('names compare case-insensitively with a trailing dot stripped, on both sides', () => {
    assert.equal(matchesAllowlist('API.Example.COM', 443, ['api.example.com']), true);
    assert.equal(matchesAllowlist('api.example.com.', 443, ['api.example.com']), true);
    assert.equal(matchesAllowlist('api.example.com', 443, ['API.EXAMPLE.COM.']), true);
  });
  it('names compare after IDNA normalisation', () => {
    assert.equal(matchesAllowlist('bücher.example', 443, ['xn--bcher-kva.example']), true);
    assert.equal(matchesAllowlist('xn--bcher-kva.example', 443, ['Bücher.example']), true);
    assert.equal(matchesAllowlist('ＡＰＩ.example.com', 443, ['api.example.com']), true, 'full-width letters fold');
    assert.equal(matchesAllowlist('bucher.example', 443, ['bücher.example']), false);
  });
});

describe('allowlist: ports', () => {
  it('an entry with :port admits that port only', () => {
    assert.equal(matchesAllowlist('api.example.com', 8443, ['api.example.com:8443']), true);
    assert.equal(matchesAllowlist('api.example.com', 443, ['api.example.com:8443']), false);
  });
  it(':443 is the same as no port', () => {
    assert.equal(matchesAllowlist('api.example.com', 443, ['api.example.com:443']), true);
  });
});

describe('allowlist: wildcards', () => {
  it('*.example.com admits names below example.com at any depth', () => {
    assert.equal(matchesAllowlist('a.example.com', 443, ['*.example.com']), true);
    assert.equal(matchesAllowlist('a.b.example.com', 443, ['*.example.com']), true);
  });
  it('*.example.com does not admit the bare apex example.com', () => {
    assert.equal(matchesAllowlist('example.com', 443, ['*.example.com']), false);
  });
  it('*.example.com does not admit look-alike names', () => {
    assert.equal(matchesAllowlist('badexample.com', 443, ['*.example.com']), false);
    assert.equal(matchesAllowlist('example.com.evil.net', 443, ['*.example.com']), false);
  });
  it('a wildcard with a port admits that port only', () => {
    assert.equal(matchesAllowlist('a.example.org', 8443, ['*.example.org:8443']), true);
    assert.equal(matchesAllowlist('a.example.org', 443, ['*.example.org:8443']), false);
  });
  it('a wildcard entry is IDNA-normalised too', () => {
    assert.equal(matchesAllowlist('shop.xn--bcher-kva.example', 443, ['*.bücher.example']), true);
  });
});

describe('allowlist: IP literals only when listed exactly', () => {
  it('an IPv4 literal is admitted only by the same address', () => {
    assert.equal(matchesAllowlist('203.0.113.7', 443, ['203.0.113.7']), true);
    assert.equal(matchesAllowlist('203.0.113.8', 443, ['203.0.113.7']), false);
    assert.equal(matchesAllowlist('203.0.113.7', 8443, ['203.0.113.7:8443']), true);
  });
  it('an IPv6 literal is compared in canonical form', () => {
    assert.equal(matchesAllowlist('[2001:db8:0:0::1]', 443, ['[2001:db8::1]']), true);
    assert.equal(matchesAllowlist('2001:db8::1', 443, ['[2001:DB8::1]']), true);
    assert.equal(matchesAllowlist('[2001:db8::1]', 8443, ['[2001:db8::1]:8443']), true);
  });
  it('wildcards never admit addresses, and names never admit their addresses', () => {
    assert.equal(matchesAllowlist('127.0.0.1', 443, ['*.0.0.1']), false);
    assert.equal(matchesAllowlist('127.0.0.1', 443, ['localhost']), false);
  });
});

describe('allowlist entries: parsing', () => {
  it('names what is wrong with an entry', () => {
    for (const bad of ['', '*', '*.', 'a/b', 'https://api.example.com', 'user@host', 'host:0', 'host:70000', '*.*.example.com', '*.127.0.0.1', 'a b']) {
      assert.ok('problem' in parseAllowEntry(bad), `${JSON.stringify(bad)} must be refused`);
    }
  });
  it('parses the forms of the page', () => {
    assert.deepEqual(parseAllowEntry('api.example.com'), { wildcard: false, host: 'api.example.com', isAddress: false, port: 443 });
    assert.deepEqual(parseAllowEntry('*.example.org:8443'), { wildcard: true, host: 'example.org', isAddress: false, port: 8443 });
    assert.deepEqual(parseAllowEntry('[::1]:9'), { wildcard: false, host: '[::1]', isAddress: true, port: 9 });
  });
  it('canonicalHost refuses text that is not a host', () => {
    assert.equal(canonicalHost(''), null);
    assert.equal(canonicalHost('a..b'), null);
    assert.equal(canonicalHost('Example.COM.'), 'example.com');
  });
});
