/** server/: HTTP (REST `/v1`, the MCP endpoints, API-key auth, connection limits). What cli/ may use of it. */
export { startServer, bundledExamplesDir } from './start.js';
