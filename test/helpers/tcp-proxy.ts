/**
 * A TCP proxy on a free loopback port in front of one server, that a test can cut and restore: cut, it drops
 * every connection it carries and every new one at once (what a network partition between one replica and its
 * database looks like to that replica, while the others still reach it directly).
 */
import { createConnection, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops the connections carried, and from now on every new one as it comes. */
  cut(): void;
  /** Carries connections again. */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let cut = false;
  const carried = new Set<Socket>();
  const server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ port: targetPort, host: targetHost });
    for (const socket of [client, upstream]) {
      carried.add(socket);
      socket.on('close', () => carried.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    cut() {
      cut = true;
      for (const socket of carried) socket.destroy();
    },
    restore() {
      cut = false;
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of carried) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
