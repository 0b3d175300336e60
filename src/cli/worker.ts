/**
 * `subako worker --nats URL [--pool N] [--volumes-dir DIR] [--data-dir DIR]`: a worker node. It joins the
 * NATS queue group of calls, runs each in its sandbox pool and answers (platform/nats-worker.ts). It needs
 * the API replicas' sealing key (SUBAKO_SECRET_KEY) to open a call's credentials, and the same volumes
 * file system at --volumes-dir. SIGINT or SIGTERM: no new calls, those running finish, then it exits.
 */
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { sealingKey } from '../common/index.js';
import { NatsBlobStore } from '../package/index.js';
import { NatsWorker, connectNats, natsSubjects } from '../platform/index.js';
import type { CommandContext } from './command-context.js';

interface WorkerFlags {
  nats?: string;
  natsPrefix: string;
  pool?: string;
  volumesDir?: string;
  dataDir?: string;
  callTimeoutMs?: string;
  memory?: string;
}

const count = (value: string | undefined, flag: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(value)) throw new UsageError(`${flag} must be a whole number above 0, not ${JSON.stringify(value)}`);
  return Number(value);
};

export function registerWorker(program: Command, ctx: CommandContext): void {
  program
    .command('worker')
    .description('Run function calls for `subako serve --nats` replicas: join the NATS queue group and answer calls.')
    .option('--nats <url>', 'the NATS server (JetStream enabled) the API replicas use ($SUBAKO_NATS_URL)')
    .option('--nats-prefix <name>', 'the deployment\'s subjects and bucket, as given to serve', process.env.SUBAKO_NATS_PREFIX ?? 'subako')
    .option('--pool <n>', 'calls run at once (default: one per core, at least two; $SUBAKO_WORKERS)')
    .option('--volumes-dir <dir>', 'the shared volumes root, the same file system as serve\'s (default <data-dir>/volumes)')
    .option('--data-dir <dir>', 'this worker\'s own directory: unpacked packages and compiled-module cache (default ~/.subako/worker)')
    .option('--call-timeout-ms <ms>', 'the longest a call may run here, whatever its deadline (default 30000)')
    .option('--memory <MiB>', 'memory cap of a function call (default 512)')
    .action(async (flags: WorkerFlags) => {
      const url = flags.nats ?? process.env.SUBAKO_NATS_URL;
      if (!url) throw new UsageError('subako worker needs --nats URL (or $SUBAKO_NATS_URL): the NATS server the API replicas use');
      const pool = count(flags.pool ?? process.env.SUBAKO_WORKERS, '--pool') ?? Math.max(2, availableParallelism());
      const dataDir = resolve(flags.dataDir ?? process.env.SUBAKO_WORKER_DATA_DIR ?? join(homedir(), '.subako', 'worker'));
      const volumesDir = resolve(flags.volumesDir ?? join(dataDir, 'volumes'));
      const callTimeoutMs = count(flags.callTimeoutMs, '--call-timeout-ms');
      const memoryMiB = count(flags.memory, '--memory');
      const prefix = flags.natsPrefix;
      const subjects = natsSubjects(prefix);
      const key = sealingKey({ ...process.env, SUBAKO_HOME: dataDir });
      if (!process.env.SUBAKO_SECRET_KEY) {
        process.stderr.write("subako worker: SUBAKO_SECRET_KEY is not set; calls that use vault credentials will fail until it holds the API replicas' key\n");
      }
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      const nc = await connectNats(url, 'subako-worker');
      const blobs = await NatsBlobStore.open(nc, subjects.packagesBucket);
      const worker = new NatsWorker({
        nc, prefix, blobs, pool, volumesDir, dataDir, sealingKey: key, log,
        limits: { ...(callTimeoutMs ? { callTimeoutMs } : {}), ...(memoryMiB ? { memoryBytes: memoryMiB * 1024 * 1024 } : {}) },
      });
      await worker.start();
      process.stdout.write(`subako worker ${worker.name} taking calls on ${subjects.calls} (${pool} at once)\nvolumes: ${volumesDir}\n`);
      await new Promise<void>((done) => {
        const stop = (signal: string): void => {
          process.off('SIGINT', onInt);
          process.off('SIGTERM', onTerm);
          log(`${signal}: finishing calls in flight, then stopping`);
          worker.close().then(() => nc.close()).then(done, (err: unknown) => {
            log(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
            ctx.exitCode = 1;
            done();
          });
        };
        const onInt = (): void => stop('SIGINT');
        const onTerm = (): void => stop('SIGTERM');
        process.on('SIGINT', onInt);
        process.on('SIGTERM', onTerm);
      });
      log(`stopped after ${worker.answered} calls`);
    });
}
