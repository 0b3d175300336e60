/**
 * Bodies too large for one message on the bus: a call's arguments, or its outcome, that would pass the REST and
 * MCP gates (4 MiB) but not the NATS server's max_payload (1 MiB by default). Pure logic; the dispatch
 * (nats-runtime.ts) and the worker (nats-worker.ts) move the pieces.
 *
 * A body above the inline size travels once, to the one party that needs it, in pieces of at most what one
 * message may carry: the call sent to a worker is only a claim that declares the body (its bytes, its pieces,
 * its SHA-256); once that worker has taken the call and said `accepted`, the replica sends the pieces to that
 * worker's control subject. An outcome too large goes back the same way, pieces first on the call's reply inbox,
 * then the `outcome` declaring them. A call sent again (its worker was full) re-sends its small claim, never its body.
 *
 * Each piece is sealed like every message (nats-envelope.ts): bound to its subject (one worker's control subject,
 * or one call's inbox), its call id and its number, so a piece replayed, moved to another call or reordered does
 * not open or is dropped. The
 * assembly refuses at once a body that grows past what was declared, and one that ends short of it or differs
 * from its digest: a body is taken whole and exact, or not at all.
 */
import { createHash } from 'node:crypto';

/** What a claim (or an outcome) declares of the body that follows it in pieces. */
export interface DeclaredBody {
  bytes: number;
  parts: number;
  /** SHA-256 of the whole body, hex. */
  sha256: string;
}

/** Room left in a message for the envelope around a piece (its header, IV and tag, ~150 bytes), with margin. */
const ENVELOPE_ROOM = 1_024;
/** The largest body either side assembles: well above the gates' 4 MiB, far below what would hurt a process. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Below this a body travels inside its message: most calls are small, and one message is cheapest. */
export const INLINE_BODY_BYTES = 64 * 1024;
/** NATS's own default max_payload, for a connection that has not said its server's. */
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** How large one piece may be on a server whose max_payload is `maxPayload`. */
export function partBytes(maxPayload: number): number {
  return Math.max(1_024, maxPayload - ENVELOPE_ROOM);
}

/**
 * Whether `bytes` travels inside its message on a server whose max_payload is `maxPayload`, or in pieces. A
 * call's arguments travel inline up to INLINE_BODY_BYTES (a claim is re-sent while the call waits for a slot);
 * an outcome (`inlineUpTo` Infinity) as long as one message carries it.
 */
export function travelsInline(bytes: number, maxPayload: number, inlineUpTo = INLINE_BODY_BYTES): boolean {
  return bytes <= Math.min(inlineUpTo, partBytes(maxPayload));
}

/** A body cut into pieces of at most `size` bytes, with what its message declares. */
export function splitBody(body: Buffer, size: number): { declared: DeclaredBody; parts: Buffer[] } {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) parts.push(body.subarray(at, at + size));
  return { declared: { bytes: body.length, parts: parts.length, sha256: createHash('sha256').update(body).digest('hex') }, parts };
}

/** What is wrong with a declared body off the wire (authentic, so a sender of another version, or a bug); null when nothing. */
export function declaredProblem(value: unknown): string | null {
  const d = value as Partial<DeclaredBody> | null;
  if (typeof d !== 'object' || d === null) return 'a body declared as nothing';
  if (!Number.isSafeInteger(d.bytes) || (d.bytes as number) < 1 || (d.bytes as number) > MAX_BODY_BYTES) return `a body of ${String(d.bytes)} bytes (at most ${MAX_BODY_BYTES})`;
  if (!Number.isSafeInteger(d.parts) || (d.parts as number) < 1 || (d.parts as number) > (d.bytes as number)) return `a body in ${String(d.parts)} pieces`;
  if (typeof d.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(d.sha256)) return 'a body without its SHA-256';
  return null;
}

/** What adding a piece came to: more to come, the body whole, or why it is refused. */
export type Assembled = { state: 'more' } | { state: 'whole'; body: Buffer } | { state: 'refused'; why: string };

/**
 * One body as its pieces arrive, in order. With `declared` known up front (a call's arguments), a piece past the
 * declared size or count is refused at once and the last one completes it; without (an outcome's pieces come
 * before the `outcome` that declares them), pieces are held up to MAX_BODY_BYTES and `finish` checks them.
 */
export class BodyAssembly {
  private readonly pieces: Buffer[] = [];
  private received = 0;

  constructor(private readonly declared?: DeclaredBody) {}

  get receivedBytes(): number {
    return this.received;
  }

  get receivedParts(): number {
    return this.pieces.length;
  }

  add(piece: Uint8Array): Assembled {
    const limit = this.declared?.bytes ?? MAX_BODY_BYTES;
    if (this.received + piece.length > limit || (this.declared && this.pieces.length >= this.declared.parts)) {
      return { state: 'refused', why: `more than the ${limit} bytes${this.declared ? ` in ${this.declared.parts} pieces` : ''} declared` };
    }
    this.pieces.push(Buffer.from(piece));
    this.received += piece.length;
    if (this.declared && this.pieces.length === this.declared.parts) return this.finish(this.declared);
    return { state: 'more' };
  }

  /** The body, when what arrived is exactly what `declared` says. */
  finish(declared: DeclaredBody): Assembled {
    if (this.received !== declared.bytes || this.pieces.length !== declared.parts) {
      return { state: 'refused', why: `${this.received} bytes in ${this.pieces.length} pieces arrived, ${declared.bytes} in ${declared.parts} were declared` };
    }
    const body = Buffer.concat(this.pieces);
    if (createHash('sha256').update(body).digest('hex') !== declared.sha256) return { state: 'refused', why: 'the pieces do not make the body declared (its SHA-256 differs)' };
    return { state: 'whole', body };
  }
}
