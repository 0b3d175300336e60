import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isForbiddenAddress } from '../../src/egress/index.js';

function forbidden(...ips: string[]): void {
  for (const ip of ips) assert.equal(isForbiddenAddress(ip), true, `${ip} must be forbidden`);
}
function allowed(...ips: string[]): void {
  for (const ip of ips) assert.equal(isForbiddenAddress(ip), false, `${ip} must be allowed`);
}

describe('forbidden destinations: IPv4 ranges', () => {
  it('loopback 127/8', () => forbidden('127.0.0.1', '127.0.0.0', '127.255.255.255', '127.1.2.3'));
  it('private 10/8, 172.16/12, 192.168/16', () => {
    forbidden('10.0.0.0', '10.255.255.255', '172.16.0.0', '172.31.255.255', '192.168.0.1', '192.168.255.255');
    allowed('9.255.255.255', '11.0.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0');
  });
  it('link-local 169.254/16, cloud metadata included', () => {
    forbidden('169.254.169.254', '169.254.0.0', '169.254.255.255', '169.254.170.2');
    allowed('169.253.255.255', '169.255.0.0');
  });
  it('carrier-grade NAT 100.64/10', () => {
    forbidden('100.64.0.0', '100.127.255.255', '100.100.100.200');
    allowed('100.63.255.255', '100.128.0.0');
  });
  it('this network 0/8 (unspecified included)', () => forbidden('0.0.0.0', '0.1.2.3', '0.255.255.255'));
  it('IETF protocol assignments 192.0.0/24', () => {
    forbidden('192.0.0.0', '192.0.0.8', '192.0.0.255');
    allowed('192.0.1.0');
  });
  it('documentation 192.0.2/24, 198.51.100/24, 203.0.113/24', () => {
    forbidden('192.0.2.1', '198.51.100.0', '198.51.100.255', '203.0.113.7');
    allowed('192.0.3.0', '198.51.101.0', '198.51.99.255', '203.0.112.255', '203.0.114.0');
  });
  it('benchmarking 198.18/15', () => {
    forbidden('198.18.0.0', '198.19.255.255');
    allowed('198.17.255.255', '198.20.0.0');
  });
  it('deprecated 6to4 relay anycast 192.88.99/24', () => forbidden('192.88.99.1'));
  it('multicast 224/4', () => forbidden('224.0.0.1', '239.255.255.250', '230.1.2.3'));
  it('reserved 240/4 and broadcast', () => forbidden('240.0.0.0', '250.1.1.1', '255.255.255.255'));
  it('public addresses are allowed', () => {
    allowed('1.1.1.1', '8.8.8.8', '93.184.216.34', '223.255.255.255', '100.0.0.1', '172.217.0.0', '192.0.3.1', '1.0.0.0');
  });
});

describe('forbidden destinations: IPv6 ranges', () => {
  it('unspecified and loopback', () => forbidden('::', '::1', '0:0:0:0:0:0:0:1', '[::1]'));
  it('unique-local fc00::/7', () => forbidden('fc00::1', 'fd00::2', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'));
  it('link-local fe80::/10, with or without a zone', () => forbidden('fe80::1', 'fe80::1%eth0', 'febf::1'));
  it('deprecated site-local fec0::/10', () => forbidden('fec0::1'));
  it('multicast ff00::/8', () => forbidden('ff02::1', 'ff05::1:3', 'ff0e::1'));
  it('documentation 2001:db8::/32 and 3fff::/20', () => forbidden('2001:db8::1', '2001:0db8:ffff::', '3fff::1', '3fff:0fff::1'));
  it('benchmarking 2001:2::/48', () => {
    forbidden('2001:2::1', '2001:2:0:ffff::1');
    allowed('2001:2:1::1');
  });
  it('ORCHID identifiers 2001:10::/28 and 2001:20::/28', () => forbidden('2001:10::1', '2001:2f::1'));
  it('discard-only 100::/64 and the rest of the reserved ::/8', () => forbidden('100::1', '::2:3:4:5', '1::'));
  it('IPv4-compatible ::/96 (deprecated) is refused whatever it embeds', () => forbidden('::127.0.0.1', '::10.0.0.1', '::8.8.8.8'));
  it('global unicast is allowed', () => allowed('2606:4700:4700::1111', '2a00:1450:4001:81c::200e', '2001:4860:4860::8888'));
  it('addresses outside 2000::/3 are refused', () => forbidden('4000::1', '8000::1', 'e000::1'));
});

describe('forbidden destinations: IPv4 in IPv6 forms', () => {
  it('IPv4-mapped ::ffff:a.b.c.d is judged as the IPv4 address', () => {
    forbidden('::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.1.2.3', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '[::ffff:192.168.1.1]');
    allowed('::ffff:8.8.8.8', '::ffff:0808:0808');
  });
  it('IPv4-translated ::ffff:0:a.b.c.d is judged as the IPv4 address', () => {
    forbidden('::ffff:0:127.0.0.1', '::ffff:0:10.0.0.1');
    allowed('::ffff:0:8.8.8.8');
  });
  it('NAT64 64:ff9b::/96 is judged by its embedded IPv4 address', () => {
    forbidden('64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::10.0.0.1', '64:ff9b::192.168.0.1', '64:ff9b::100.64.0.1');
    allowed('64:ff9b::8.8.8.8', '64:ff9b::1.1.1.1');
  });
  it('local-use NAT64 64:ff9b:1::/48 is refused entirely', () => forbidden('64:ff9b:1::8.8.8.8', '64:ff9b:1:ffff::1'));
  it('6to4 2002::/16 is judged by the IPv4 address in bits 16..48', () => {
    forbidden('2002:7f00:1::', '2002:a9fe:a9fe::1', '2002:0a00:0001::', '2002:c0a8:0101::1', '2002:0000:0000::');
    allowed('2002:0808:0808::1');
  });
  it('Teredo 2001::/32 is judged by its server and (inverted) client addresses', () => {
    // server 8.8.8.8, client 1.1.1.1 (inverted: fefe:fefe)
    allowed('2001:0:808:808::fefe:fefe');
    // client 127.0.0.1 inverted is 80ff:fffe
    forbidden('2001:0:808:808::80ff:fffe');
    // server 10.0.0.1
    forbidden('2001:0:a00:1::fefe:fefe');
  });
});

describe('forbidden destinations: anything that is not an address is refused', () => {
  it('names, empty text and malformed literals', () => forbidden('', 'localhost', 'example.com', '1.2.3', '999.1.1.1', ':::1', '[::1'));
});
