/**
 * platform/scale-out/: calls over NATS — the authenticated bus (every message sealed and bound), the API
 * replica's runtime that sends calls, the worker that runs them, the relayed live stream, and the bus's metrics.
 */
export { natsSubjects, type NatsSubjects } from './nats-calls.js';
export { connectNats } from './nats-connect.js';
export { type HistogramSnapshot, type NatsCallResult, type NatsDispatchStats } from './nats-dispatch-stats.js';
export { BUS_DROP_REASONS, busKey, type BusDropReason } from './nats-envelope.js';
export { CallEventRelay } from './nats-events.js';
export { ListingRelay, readListing, type RelayedListing } from './nats-listings.js';
export { BusKeyMismatchError, checkBusKey } from './nats-key-check.js';
export { NatsRuntime, type NatsRuntimeOptions } from './nats-runtime.js';
export { NatsWorker, type NatsWorkerOptions } from './nats-worker.js';
