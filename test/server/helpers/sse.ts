/**
 * A Server-Sent Events reader for tests: opens a stream with fetch and hands out events one at a time, as
 * the HTML spec's parsing rules read them (fields `id`, `event`, `data`, `retry`; comment lines kept apart).
 */
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The next event; rejects if the stream ends first. */
  next(): Promise<SseEvent>;
  /** Comment lines seen so far (heartbeats). */
  comments: string[];
  retry: number | null;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  const aborter = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: aborter.signal });
  const queue: SseEvent[] = [];
  const waiters: { resolve: (e: SseEvent) => void; reject: (err: Error) => void }[] = [];
  const stream: SseStream = {
    status: response.status, headers: response.headers, comments: [], retry: null,
    ended: Promise.resolve(),
    next() {
      const ready = queue.shift();
      if (ready) return Promise.resolve(ready);
      if (done) return Promise.reject(new Error('the stream ended'));
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    close: () => aborter.abort(),
  };
  let done = false;
  if (!response.ok || !response.body) {
    done = true;
    await response.text();
    return stream;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let current: { id: string | null; event: string; data: string[] } = { id: null, event: 'message', data: [] };
  const dispatch = () => {
    if (current.data.length > 0 || current.id !== null) {
      const event = { id: current.id, event: current.event, data: current.data.join('\n') };
      const waiter = waiters.shift();
      if (waiter) waiter.resolve(event);
      else queue.push(event);
    }
    current = { id: null, event: 'message', data: [] };
  };
  stream.ended = (async () => {
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += value;
        let newline: number;
        while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
          if (line === '') dispatch();
          else if (line.startsWith(':')) stream.comments.push(line.slice(1).trim());
          else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') current.id = value;
            else if (field === 'event') current.event = value;
            else if (field === 'data') current.data.push(value);
            else if (field === 'retry' && /^\d+$/.test(value)) stream.retry = Number(value);
          }
        }
      }
    } catch (err) {
      if (!(err instanceof Error && err.name === 'AbortError')) throw err; // expected: our own close()
    } finally {
      done = true;
      for (const waiter of waiters.splice(0)) waiter.reject(new Error('the stream ended'));
    }
  })();
  return stream;
}
