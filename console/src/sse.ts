// The live call stream. EventSource cannot send an Authorization header (and the key must never go in a
// URL), so the stream is read with fetch and parsed here, as the HTML spec reads Server-Sent Events. It
// reconnects after the server's `retry` delay with Last-Event-ID, so nothing is missed across a drop; an
// `event: reset` means the server cannot replay what was missed, and the page reloads its list.
import { authHeaders, type AgentCallView } from './api';

export interface StreamHandlers {
  /** Each `event: call`: the call as GET /v1/calls shows it. */
  onCall(call: AgentCallView): void;
  onReset(): void;
  onState(state: 'connecting' | 'live' | 'reconnecting'): void;
}

export function followCalls(path: string, handlers: StreamHandlers): () => void {
  let stopped = false;
  let lastEventId: string | null = null;
  let retryMs = 2000;
  let aborter: AbortController | null = null;
  let timer: number | null = null;

  const connect = async () => {
    handlers.onState(lastEventId === null ? 'connecting' : 'reconnecting');
    aborter = new AbortController();
    try {
      const headers: Record<string, string> = { ...authHeaders(), accept: 'text/event-stream' };
      if (lastEventId !== null) headers['last-event-id'] = lastEventId;
      const response = await fetch(path, { headers, signal: aborter.signal, credentials: 'omit', cache: 'no-store' });
      if (response.status === 401) return; // signed out: api.ts's next call says so
      if (!response.ok || !response.body) throw new Error(`the stream answered ${response.status}`);
      handlers.onState('live');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      let event = 'message';
      let data: string[] = [];
      let id: string | null = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let newline: number;
        while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
          if (line === '') {
            if (id !== null) lastEventId = id;
            if (data.length > 0) {
              if (event === 'call') handlers.onCall(JSON.parse(data.join('\n')) as AgentCallView);
              else if (event === 'reset') handlers.onReset();
            }
            event = 'message';
            data = [];
            id = null;
          } else if (!line.startsWith(':')) {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const fieldValue = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') event = fieldValue;
            else if (field === 'data') data.push(fieldValue);
            else if (field === 'id') id = fieldValue;
            else if (field === 'retry' && /^\d+$/.test(fieldValue)) retryMs = Number(fieldValue);
          }
        }
      }
    } catch (error) {
      if (stopped) return;
      console.warn('call stream:', error);
    }
    if (stopped) return;
    handlers.onState('reconnecting');
    timer = window.setTimeout(() => void connect(), retryMs);
  };

  void connect();
  return () => {
    stopped = true;
    if (timer !== null) window.clearTimeout(timer);
    aborter?.abort();
  };
}
