/**
 * A certificate authority made at test time with the openssl CLI, and one leaf certificate for the names
 * and addresses the egress tests use. Nothing is committed: every run makes its own keys.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  /** The CA certificate (PEM), to trust. */
  ca: string;
  /** The leaf's certificate and key (PEM), for servers. */
  cert: string;
  key: string;
  /** A self-signed certificate and key for the same names, trusted by nobody. */
  untrustedCert: string;
  untrustedKey: string;
}

/** Names on the leaf: everything under example.test and other.test, localhost, and loopback addresses. */
export const LEAF_NAMES = ['localhost', 'example.test', '*.example.test', 'other.test', '*.other.test', 'rebind.test', 'private.test'];
export const LEAF_ADDRESSES = ['127.0.0.1', '127.0.0.2', '::1'];

let cached: TestCa | undefined;

export function makeTestCa(): TestCa {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'subako-egress-ca-'));
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    run('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=subako egress test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    run('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
    const san = [...LEAF_NAMES.map((n) => `DNS:${n}`), ...LEAF_ADDRESSES.map((a) => `IP:${a}`)].join(',');
    writeFileSync(join(dir, 'leaf.ext'),
      `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`);
    run('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem',
      '-days', '2', '-extfile', 'leaf.ext');
    run('req', '-x509', ...ec, '-keyout', 'self.key', '-out', 'self.pem', '-days', '2', '-subj', '/CN=localhost',
      '-addext', `subjectAltName=${san}`);
    const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
    cached = {
      ca: read('ca.pem'),
      cert: read('leaf.pem'),
      key: read('leaf.key'),
      untrustedCert: read('self.pem'),
      untrustedKey: read('self.key'),
    };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
