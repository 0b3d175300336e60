/**
 * The serving side of progress: a `tools/call` that carries a `progressToken` gets a ProgressReporter whose
 * reports become `notifications/progress` on the request's own stream. Whatever a tool reports (a hostile
 * guest's numbers included) is checked here, once for every source: a value that is not a finite number, or
 * that does not rise above the last one sent (the spec: progress MUST increase), is dropped, and nothing is
 * sent once the call has ended. Sending never throws into the tool: a client gone away is the call's business
 * (its signal), not the reporter's.
 */
import type { ProgressReporter } from '../tool.js';

export type ProgressToken = string | number;

export interface ProgressNotification {
  method: 'notifications/progress';
  params: { progressToken: ProgressToken; progress: number; total?: number; message?: string };
}

/** A message longer than this is cut: it is a line for people, and a tool does not fill a stream with it. */
export const MAX_PROGRESS_MESSAGE_CHARS = 1000;

/** The request's progress token when it asked for progress (a string or an integer-valued number), or undefined. */
export function progressTokenOf(meta: unknown): ProgressToken | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const token = (meta as { progressToken?: unknown }).progressToken;
  if (typeof token === 'string') return token;
  if (typeof token === 'number' && Number.isFinite(token)) return token;
  return undefined;
}

export interface ProgressSender {
  readonly report: ProgressReporter;
  /** The call ended: later reports are dropped. */
  end(): void;
}

export function progressSender(token: ProgressToken, send: (notification: ProgressNotification) => Promise<void>, onError: (error: Error) => void): ProgressSender {
  let last = Number.NEGATIVE_INFINITY;
  let ended = false;
  const report: ProgressReporter = (done, total, message) => {
    if (ended || typeof done !== 'number' || !Number.isFinite(done) || done <= last) return;
    last = done;
    const params: ProgressNotification['params'] = { progressToken: token, progress: done };
    if (typeof total === 'number' && Number.isFinite(total)) params.total = total;
    if (typeof message === 'string') params.message = message.length > MAX_PROGRESS_MESSAGE_CHARS ? message.slice(0, MAX_PROGRESS_MESSAGE_CHARS) : message;
    try {
      send({ method: 'notifications/progress', params }).catch((err: unknown) => onError(err instanceof Error ? err : new Error(String(err))));
    } catch (err) {
      onError(err instanceof Error ? err : new Error(String(err)));
    }
  };
  return { report, end: () => { ended = true; } };
}
