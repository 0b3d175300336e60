/**
 * The JSON answer a guest reads back with `read_response`: `{"ok": …}` or `{"error": {"kind", "message"}}`.
 */
import { EgressError, type EgressErrorKind } from './errors.js';
import type { AnswerBody } from './output.js';

export interface HttpOk {
  status: number;
  headers: Record<string, string>;
  body: AnswerBody;
}

export type HttpAnswer = { ok: HttpOk } | { error: { kind: EgressErrorKind; message: string } };

export function okAnswer(ok: HttpOk): HttpAnswer {
  return { ok };
}

export function errorAnswer(error: EgressError): HttpAnswer {
  return { error: { kind: error.kind, message: error.message } };
}

export function encodeAnswer(answer: HttpAnswer): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(answer));
}

/** An answer carrying the `abi` kind, for import glue that must report a misuse inside an answer. */
export function abiErrorAnswer(message: string): Uint8Array {
  return encodeAnswer(errorAnswer(new EgressError('abi', message)));
}
