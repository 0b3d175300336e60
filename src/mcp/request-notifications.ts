/**
 * Notifications a server sends on one request's response stream that belong to that request's caller and that the
 * SDK client has no per-request callback for: `notifications/message` (progress has its token and the SDK's
 * `onprogress`). The SDK client hands every notification to one handler per connection, which cannot tell whose
 * request it came with, and a pooled connection carries many callers' requests at once. Which request a message
 * came with is known from where it is read: each request's send runs in an async context of its own
 * (bounded-transport.ts), and its stream is read inside it. The caller's sink rides in along with the send.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** A notification as the server sent it: untrusted, checked by whoever the sink hands it to. */
export interface RequestNotification {
  method: string;
  params?: unknown;
}

export type RequestNotificationSink = (notification: RequestNotification) => void;

/** The methods routed to a request's caller (the others go to the connection's handlers, as before). */
export const REQUEST_SCOPED_METHODS: ReadonlySet<string> = new Set(['notifications/message']);

const sinks = new AsyncLocalStorage<RequestNotificationSink>();

/** Runs `operation` so that the requests it sends route their request-scoped notifications to `sink`. */
export function withRequestNotifications<T>(sink: RequestNotificationSink, operation: () => Promise<T>): Promise<T> {
  return sinks.run(sink, operation);
}

/** The sink of the operation sending a request now (read by the transport when the request is sent). */
export function requestNotificationSink(): RequestNotificationSink | undefined {
  return sinks.getStore();
}
