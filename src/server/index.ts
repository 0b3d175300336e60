/**
 * server/: HTTP (REST `/v1`, the MCP endpoints, API-key auth, connection limits). What the composition root
 * (src/app.ts) uses of it: the server is handed a platform; it builds neither the platform nor the runtime.
 */
export { SHUTDOWN_GRACE_MS, SubakoServer, type ShutdownPending, type SubakoServerOptions } from './server.js';
export type { ConnectionLimits } from './connection-limits.js';
export type { OAuthDoorOptions } from './oauth-door.js';
export type { RuntimeStats } from './metrics.js';
export type { NatsStats } from './metrics.js';
export { WorkerMetrics, listenForMetrics, type WorkerStats, type MetricsListener } from './worker-metrics.js';
