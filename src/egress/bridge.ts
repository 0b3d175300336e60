/**
 * The `http` bridge channel's handler: request bytes in (from the guest, via the sandbox), answer bytes
 * out. Every outcome is an answer — a guest can make a request fail, never the handler.
 */
import type { BridgeHandler } from '../sandbox/index.js';
import { encodeAnswer, errorAnswer, okAnswer, type HttpAnswer } from './answer.js';
import type { VaultCredential } from './credentials.js';
import type { HostLookup } from './destination.js';
import { EgressError } from './errors.js';
import { sharedHttpsConnectionPool, type HttpsConnectionPool } from './connection-pool.js';
import { isForbiddenAddress } from './forbidden-address.js';
import { cachedSystemLookup } from './lookup-cache.js';
import { urlForLog, type EgressLogEntry } from './log.js';
import { performHttpRequest, type EgressSettings } from './perform.js';
import { compilePolicy, type CompiledPolicy, type EgressPolicy } from './policy.js';
import { HTTP_METHODS, MAX_REQUEST_BYTES, parseHttpRequest } from './request.js';
import { trustFor, type CaOption } from './trust.js';
import type { VolumeMount } from './volume-path.js';

export type { CaOption } from './trust.js';

export interface HttpBridgeOptions {
  /** The policy as written, or compiled once already (`compilePolicy`) by a caller that runs it for many calls. */
  policy: EgressPolicy | CompiledPolicy;
  /** The session's vault for this call: credentials per origin, used only for origins the policy grants. */
  credentials: VaultCredential[];
  /** `/volume/tmp` and, when mounted, `/volume/data`, with their host directories. */
  volume: VolumeMount[];
  /**
   * Extra certificates to trust (tests). Without it, Node's defaults apply (its root store plus
   * NODE_EXTRA_CA_CERTS); with it, Node's root store, NODE_EXTRA_CA_CERTS and these.
   */
  ca?: CaOption;
  /** Entries are appended here, one per exchange or refusal. */
  log: EgressLogEntry[];
  /**
   * The W3C trace context of the call (already checked to be one): sent as the `traceparent` header of each
   * request the guest makes without one of its own, so the call can be followed into the services it reaches.
   */
  traceparent?: string;
  /**
   * Name resolution; by default the system resolver behind a 2-second cache (answers are still checked
   * and pinned per request). Tests map names to loopback with it.
   */
  lookup?: HostLookup;
  /**
   * TESTING ONLY: exact addresses to treat as public although they are in a forbidden range, so a test can
   * run a "public" server on loopback next to a truly refused one. Never set from user configuration.
   */
  testingOnlyPublicAddresses?: string[];
  /**
   * Where connections come from: the process-wide pool unless given (a host that wants its own, closed
   * with it, passes one). Reuse never crosses name, port, checked addresses, trust or authority.
   */
  connections?: HttpsConnectionPool;
}

/** Best-effort method and URL of a request that did not parse, for its log entry. */
function describeUnparsed(payload: Uint8Array): { method: string; url: string } {
  if (payload.byteLength > MAX_REQUEST_BYTES) return { method: '', url: '' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(payload));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
    return { method: '', url: '' };
  }
  // JSON, but maybe `null` or a number: nothing to read a method or URL from.
  if (typeof parsed !== 'object' || parsed === null) return { method: '', url: '' };
  const raw = parsed as Record<string, unknown>;
  const method = (HTTP_METHODS as readonly unknown[]).includes(raw.method) ? (raw.method as string) : raw.method === undefined ? 'GET' : '';
  return { method, url: typeof raw.url === 'string' ? urlForLog(raw.url) : '' };
}

const isCompiled = (policy: EgressPolicy | CompiledPolicy): policy is CompiledPolicy => policy.grants instanceof Set;

/** Builds the handler for the sandbox's `http` bridge channel. Throws ValidationError for a bad policy. */
export function createHttpBridge(options: HttpBridgeOptions): BridgeHandler {
  const compiled = isCompiled(options.policy) ? options.policy : compilePolicy(options.policy);
  const publicForTests = new Set(options.testingOnlyPublicAddresses ?? []);
  const settings: EgressSettings = {
    allow: compiled.allow,
    credentials: { grants: compiled.grants, vault: options.credentials.map((c) => ({ origin: c.origin, headers: { ...c.headers } })) },
    destination: {
      lookup: options.lookup ?? cachedSystemLookup,
      privateDestinations: compiled.privateDestinations,
      isForbidden: (ip) => !publicForTests.has(ip) && isForbiddenAddress(ip),
    },
    volume: options.volume.map((v) => ({ guestPath: v.guestPath, hostPath: v.hostPath })),
    trust: trustFor(options.ca),
    connections: options.connections ?? sharedHttpsConnectionPool,
    log: options.log,
    ...(options.traceparent !== undefined ? { traceparent: options.traceparent } : {}),
  };

  return async (payload, run) => {
    let answer: HttpAnswer;
    let request;
    try {
      request = parseHttpRequest(payload);
    } catch (error) {
      const failure = error instanceof EgressError ? error : new EgressError('invalid_request', 'the request could not be read');
      options.log.push({ ...describeUnparsed(payload), error: failure.kind, bytesIn: 0, bytesOut: 0, durationMs: 0 });
      return encodeAnswer(errorAnswer(failure));
    }
    try {
      answer = okAnswer(await performHttpRequest(request, settings, run));
    } catch (error) {
      // performHttpRequest classifies what it throws; anything else is a host fault reported without detail.
      answer = errorAnswer(error instanceof EgressError ? error : new EgressError('connection', 'the request failed in the host'));
    }
    return encodeAnswer(answer);
  };
}
