/**
 * The JSON answer a guest reads back with `read_response`: `{"ok": …}` or `{"error": {"kind", "message"}}`.
 */
import { httpErrorAnswer, type HttpErrorAnswer } from '../sandbox/index.js';
import type { EgressError } from './errors.js';
import type { AnswerBody } from './output.js';

export interface HttpOk {
  status: number;
  headers: Record<string, string>;
  body: AnswerBody;
}

export type HttpAnswer = { ok: HttpOk } | HttpErrorAnswer;

export function okAnswer(ok: HttpOk): HttpAnswer {
  return { ok };
}

export function errorAnswer(error: EgressError): HttpAnswer {
  return httpErrorAnswer(error.kind, error.message);
}

export function encodeAnswer(answer: HttpAnswer): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(answer));
}
