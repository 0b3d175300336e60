/**
 * A secret string (an API key, a bearer token) that stays private inside tool values: every way a person
 * could see it — `String()`, template literals, `JSON.stringify`, `util.inspect`, `console.log`, error
 * messages — shows the redaction marker (`[redacted]`). Only `reveal()` hands out the value, and only the transport calls it.
 *
 * The value lives in a module-private WeakMap, not on the object, so no reflection (`Object.keys`,
 * `structuredClone`, `util.inspect` with `showHidden`) can reach it either.
 */
import { createHmac, randomBytes } from 'node:crypto';

import { REDACTED } from './redact.js';

const values = new WeakMap<Secret, string>();

/** Fingerprints are keyed with a per-process random key: equal secrets compare equal, but a fingerprint is
 * useless outside this process (it cannot be brute-forced offline from a log or a dump). */
const fingerprintKey = randomBytes(32);

export class Secret {
  constructor(value: string) {
    if (typeof value !== 'string') throw new TypeError('a Secret holds a string');
    values.set(this, value);
    Object.freeze(this);
  }

  /** Wraps a value unless it already is a Secret. */
  static from(value: string | Secret): Secret {
    return value instanceof Secret ? value : new Secret(value);
  }

  /** Joins strings and secrets into one secret, e.g. `Secret.concat('Bearer ', apiKey)`. */
  static concat(...parts: Array<string | Secret>): Secret {
    return new Secret(parts.map((part) => (part instanceof Secret ? part.reveal() : part)).join(''));
  }

  static isSecret(value: unknown): value is Secret {
    return value instanceof Secret;
  }

  /** The plain value. Call it only where the value leaves for its destination (an HTTP header, a cipher). */
  reveal(): string {
    const value = values.get(this);
    if (value === undefined) throw new TypeError('not a Secret made by this module');
    return value;
  }

  /** A keyed hash that identifies the value within this process without disclosing it. */
  fingerprint(): string {
    return createHmac('sha256', fingerprintKey).update(this.reveal()).digest('base64url');
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return REDACTED;
  }
}

/**
 * Replaces every occurrence of the given secrets' values (and of their longer whitespace-separated parts,
 * so `xyz…` of `Bearer xyz…` is caught too) in a text that came from elsewhere — a server's error body, say.
 * Values shorter than 8 characters are left alone: no credential is that short, and cutting out, say, a
 * two-letter region header would mangle unrelated text.
 */
export function redactSecrets(text: string, secrets: Iterable<Secret>): string {
  const needles = new Set<string>();
  for (const secret of secrets) {
    const value = secret.reveal();
    if (value.length >= 8) needles.add(value);
    for (const part of value.split(/\s+/)) if (part.length >= 8) needles.add(part);
  }
  let out = text;
  // Longest first, so a whole value is replaced before any of its parts.
  for (const needle of [...needles].sort((a, b) => b.length - a.length)) {
    out = out.split(needle).join(REDACTED);
  }
  return out;
}

/** The same, through every string of a JSON value (a tool result a server filled with what it was sent). */
export function redactSecretsDeep<T>(value: T, secrets: Iterable<Secret>): T {
  const list = [...secrets];
  if (list.length === 0) return value;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return redactSecrets(node, list);
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node === 'object' && node !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) out[key] = walk(child);
      return out;
    }
    return node;
  };
  return walk(value) as T;
}
