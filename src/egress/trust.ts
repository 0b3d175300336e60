/**
 * Which certificates a connection trusts. Node's defaults (its root store plus NODE_EXTRA_CA_CERTS) apply
 * unless a `ca` option adds certificates; then a context holding all three is built — once per distinct set,
 * since parsing a root store costs ~100 ms. Each trust carries an `id` derived from its certificates, so a
 * pooled connection is only ever reused under the trust it was verified with.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { isSystemError } from '../common/index.js';

export type CaOption = string | Buffer | Array<string | Buffer>;

export interface TlsTrust {
  /** `node-default`, or a digest of the certificates added to Node's roots. */
  id: string;
  /** The context replacing Node's default one; absent for Node's defaults. */
  secureContext?: SecureContext;
}

export const NODE_DEFAULT_TRUST: TlsTrust = Object.freeze({ id: 'node-default' });

const CACHE_SIZE = 8;
/** Trusts by the text of their certificates. */
const byCertificates = new Map<string, TlsTrust>();
/**
 * Trusts by the `ca` value itself: calls pass the same string or array again and again, and a Map lookup
 * of a string it has seen reuses the string's hash, where joining and hashing the PEM text would not.
 */
const byOption = new Map<CaOption, TlsTrust>();

/**
 * NODE_EXTRA_CA_CERTS, read once: Node itself reads it once at startup, so the default trust and ours
 * agree for the whole process.
 */
let extraCertificates: Buffer[] | undefined;
function nodeExtraCertificates(): Buffer[] {
  if (extraCertificates === undefined) {
    extraCertificates = [];
    const file = process.env.NODE_EXTRA_CA_CERTS;
    if (file) {
      try {
        extraCertificates.push(readFileSync(file));
      } catch (error) {
        if (!isSystemError(error)) throw error; // expected: missing or unreadable
        // Node only warns when the file is unreadable; do the same by ignoring it.
      }
    }
  }
  return extraCertificates;
}

function remember<K>(cache: Map<K, TlsTrust>, key: K, trust: TlsTrust): void {
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as K);
  cache.set(key, trust);
}

/** The trust for a `ca` option (undefined: Node's defaults). */
export function trustFor(ca: CaOption | undefined): TlsTrust {
  if (ca === undefined) return NODE_DEFAULT_TRUST;
  const known = byOption.get(ca);
  if (known) return known;
  const certificates = [...nodeExtraCertificates(), ...(Array.isArray(ca) ? ca : [ca])];
  const text = certificates.map((c) => c.toString()).join('\n');
  let trust = byCertificates.get(text);
  if (!trust) {
    trust = {
      id: `ca:${createHash('sha256').update(text).digest('hex')}`,
      secureContext: createSecureContext({ ca: [...rootCertificates, ...certificates] }),
    };
    remember(byCertificates, text, trust);
  }
  // An array may be changed by its owner later; only immutable keys are remembered by identity.
  if (typeof ca === 'string') remember(byOption, ca, trust);
  return trust;
}
