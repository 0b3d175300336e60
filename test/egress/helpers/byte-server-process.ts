/**
 * A child process that serves /bytes?n=N over HTTPS on 127.0.0.1, so a test that measures the host's
 * memory measures only the egress side (the server's own TLS buffers live in this other process).
 * Reads its certificate and key from the environment, prints its port on stdout.
 */
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeBytes } from './routes.js';

const server = createServer({ cert: process.env.TEST_CERT, key: process.env.TEST_KEY }, (req, res) => {
  const url = new URL(req.url ?? '/', 'https://placeholder');
  const n = Number(url.searchParams.get('n'));
  res.setHeader('content-type', 'application/octet-stream');
  res.setHeader('content-length', String(n));
  writeBytes(res, n).catch(() => res.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
