// The conformance suite's server runner takes only a URL, so it cannot reach an endpoint that wants
// `Authorization: Bearer …`. This loopback relay adds that header to every request and passes the rest
// (Host and Origin included, so the DNS-rebinding checks still see what the client sent) to TARGET.
// Usage: TARGET=http://127.0.0.1:7070/v1/sessions/<id>/mcp TOKEN=st_… node conformance-bearer-proxy.mjs
// Prints its own URL (same path as TARGET) and relays until killed.
import { createServer, request } from 'node:http';

const target = new URL(process.env.TARGET ?? '');
const token = process.env.TOKEN ?? '';
if (!token) throw new Error('TOKEN (the session token) is required');

const server = createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end(); });
  req.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}${target.pathname}\n`);
});
