/**
 * `subako worker --nats URL [--pool N] [--volumes-dir DIR] [--data-dir DIR] [--metrics-port N]`: a worker
 * node. It joins the NATS queue group of calls, runs each in its sandbox pool and answers
 * (platform/nats-worker.ts). Its settings resolve as serve's do (config.ts's `resolveWorkerConfig`): flags,
 * then the environment, then the deployment's `subako.config.json` (the shared keys at its top level, the
 * worker's own in its `worker` object). It needs the API replicas' sealing key (SUBAKO_SECRET_KEY) to open a
 * call's credentials, and the same volumes file system at its volumes root. SIGINT or SIGTERM: no new calls,
 * those running finish, then it exits.
 */
import type { Command } from 'commander';
import { SealError, sealingKey, systemErrorCode } from '../common/index.js';
import { SubakoError, ValidationError } from '../errors.js';
import { CONFIG_FILE, defaultWorkerConfig, readConfigFile, resolveWorkerConfig, type WorkerConfig } from '../config.js';
import { NatsBlobStore } from '../package/index.js';
import { NatsWorker, busKey, checkBusKey, connectNats, natsSubjects } from '../platform/index.js';
import { WorkerMetrics, listenForMetrics, type MetricsListener } from '../server/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { addSettingOptions, fileKeysRead, settingFlags } from './setting-options.js';
import { untilStopped } from './until-stopped.js';

export function registerWorker(program: Command, ctx: CommandContext): void {
  const worker = program
    .command('worker')
    .description("Run function calls for `subako serve --nats` replicas: join the NATS queue group and answer calls. Needs the replicas' sealing key in $SUBAKO_SECRET_KEY.");
  addSettingOptions(worker, 'worker')
    .option('--config <file>', `settings file (default ./${CONFIG_FILE} when it exists): ${fileKeysRead('worker')}; flags and environment win over it`)
    .action(async (flags: { config?: string }, command: Command) => {
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      const fail = (err: unknown): void => {
        process.stderr.write(`subako worker: cannot start: ${startLine(err)}\n`);
        ctx.exitCode = EXIT_FAILED;
      };
      let config: WorkerConfig;
      let key: Buffer;
      try {
        config = resolveWorkerConfig({
          defaults: defaultWorkerConfig(),
          file: readConfigFile(flags.config),
          env: process.env,
          flags: settingFlags(command, 'worker'),
        });
        key = workerSealingKey(process.env);
      } catch (err) {
        fail(err);
        return;
      }
      const subjects = natsSubjects(config.natsPrefix);
      let nc;
      let worker: NatsWorker;
      let metrics: MetricsListener | undefined;
      try {
        nc = await connectNats(config.nats.reveal(), 'subako-worker');
      } catch (err) {
        fail(err);
        return;
      }
      try {
        await checkBusKey(nc, config.natsPrefix, busKey(key, config.natsPrefix), { create: false });
        const blobs = await NatsBlobStore.open(nc, subjects.packagesBucket);
        worker = new NatsWorker({
          nc, prefix: config.natsPrefix, blobs, pool: config.pool, volumesDir: config.volumesDir, dataDir: config.dataDir, sealingKey: key, log,
          limits: { callTimeoutMs: config.callTimeoutMs, memoryBytes: config.memoryMiB * 1024 * 1024 },
        });
        await worker.start();
        if (config.metricsPort !== undefined) {
          const stats = worker.stats.bind(worker);
          metrics = await listenForMetrics(new WorkerMetrics(stats), config.metricsHost, config.metricsPort);
        }
      } catch (err) {
        await nc.close();
        fail(err);
        return;
      }
      // The "taking calls" line comes last: whoever waits for it (a supervisor, a test) finds the others there.
      process.stdout.write(`${metrics ? `metrics: ${metrics.url}\n` : ''}volumes: ${config.volumesDir}\nsubako worker ${worker.name} taking calls on ${subjects.calls} (${config.pool} at once)\n`);
      await untilStopped(ctx, log, async () => {
        await metrics?.close();
        await worker.close();
        await nc.close();
      });
      log(`stopped after ${worker.answered} calls`);
    });
}

/**
 * The replicas' sealing key, from SUBAKO_SECRET_KEY only. A worker that made its own key file would start and
 * then fail every call that carries vault credentials, far from where the mistake was made; so it refuses to
 * start, saying where the replicas' key is.
 */
function workerSealingKey(processEnv: NodeJS.ProcessEnv): Buffer {
  if (!processEnv.SUBAKO_SECRET_KEY) {
    throw new ValidationError([{
      code: 'config.secret_key',
      message: "SUBAKO_SECRET_KEY is not set; give every worker the API replicas' sealing key: their SUBAKO_SECRET_KEY, or the base64 line of secret.key in serve's data directory",
    }]);
  }
  return sealingKey({ SUBAKO_SECRET_KEY: processEnv.SUBAKO_SECRET_KEY });
}

/** One line for a start that failed: the settings' problems, or the error's own sentence; never a secret. */
function startLine(err: unknown): string {
  if (err instanceof ValidationError) return err.problems.map((p) => p.message).join('; ');
  if (err instanceof SealError) return `${err.message}: the same key as the API replicas'`;
  if (err instanceof SubakoError) return err.message;
  // What the system refused (a metrics port taken, a data directory not writable) says it in its message.
  if (err instanceof Error && systemErrorCode(err) !== undefined) return err.message;
  throw err;
}
