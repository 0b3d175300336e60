/**
 * A PostgreSQL server of a test's own, for tests that stop and start it (services.md: never the machine's
 * shared one). It runs as the `postgres` user (PostgreSQL refuses root) on a free loopback port, in a
 * temporary directory that user owns, and is stopped by its own data directory (its postmaster.pid).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = '/usr/lib/postgresql/15/bin';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function postgresUid(): { uid: number; gid: number } {
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export interface PostgresInstance {
  port: number;
  start(): void;
  stop(): void;
  /** Stops it if running and removes its directory. */
  destroy(): void;
}

/** initdb's a new cluster and starts it. */
export async function startPostgresInstance(): Promise<PostgresInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'subako-pg-'));
  const { uid, gid } = postgresUid();
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const port = await freePort();
  const asPostgres = (cmd: string, args: string[]): void => {
    execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, cmd), ...args], { stdio: 'pipe' });
  };
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  let running = false;
  const instance: PostgresInstance = {
    port,
    start() {
      asPostgres('pg_ctl', ['-D', data, '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, '-l', join(dir, 'log'), '-w', 'start']);
      running = true;
    },
    stop() {
      asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      running = false;
    },
    destroy() {
      if (running) asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  instance.start();
  return instance;
}
