/**
 * The routes the egress test servers answer, by path:
 *   /echo            JSON of what arrived (method, path, headers, body as text)
 *   /quiet           "ok", echoing nothing
 *   /headers         repeated and mixed-case response headers
 *   /bytes?n=N       N bytes of "a" (streamed in 64 KiB writes that respect backpressure)
 *   /binary          bytes that are not UTF-8
 *   /hang            headers never sent (for timeouts)
 *   /drip            headers sent, then the body never ends
 *   /broken          the connection is destroyed without an answer
 *   /redirect?to=URL&status=S   a redirect
 *   /loop            redirects to itself forever
 *   /hops?n=N        N redirects in a row, then "done"
 */
import type { ServerResponse } from 'node:http';
import type { Route } from './servers.js';

export async function writeBytes(res: ServerResponse, total: number, fill = 0x61): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, fill);
  let left = total;
  while (left > 0) {
    const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= part.length;
    if (!res.write(part)) {
      await new Promise<void>((resolve, reject) => {
        const onDrain = (): void => {
          res.off('close', onClose);
          resolve();
        };
        const onClose = (): void => {
          res.off('drain', onDrain);
          reject(new Error('closed'));
        };
        res.once('drain', onDrain);
        res.once('close', onClose);
      });
    }
  }
  res.end();
}

export const testRoutes: Route = async (req, res, arrival) => {
  const url = new URL(req.url ?? '/', 'https://placeholder');
  switch (url.pathname) {
    case '/echo':
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: arrival.method, path: arrival.path, headers: arrival.headers, body: arrival.body.toString('utf8') }));
      return;
    case '/quiet':
      res.end('ok');
      return;
    case '/headers':
      res.setHeader('X-Multi', ['one', 'two']);
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.setHeader('Content-Type', 'text/plain');
      res.end('headers');
      return;
    case '/bytes':
      res.setHeader('content-type', 'application/octet-stream');
      res.setHeader('content-length', String(Number(url.searchParams.get('n'))));
      await writeBytes(res, Number(url.searchParams.get('n')));
      return;
    case '/binary':
      res.end(Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x00]));
      return;
    case '/hang':
      return;
    case '/drip':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first bytes');
      return;
    case '/broken':
      req.socket.destroy();
      return;
    case '/redirect':
      res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' });
      res.end('moved');
      return;
    case '/loop':
      res.writeHead(302, { location: '/loop' });
      res.end();
      return;
    case '/hops': {
      const n = Number(url.searchParams.get('n'));
      if (n > 0) res.writeHead(302, { location: `/hops?n=${n - 1}` }).end();
      else res.end('done');
      return;
    }
    default:
      res.writeHead(404);
      res.end('not found');
  }
};
