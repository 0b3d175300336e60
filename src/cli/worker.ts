/**
 * `subako worker --nats URL [--pool N] [--volumes-dir DIR] [--data-dir DIR] [--metrics-port N]`: a worker
 * node. It joins the NATS queue group of calls, runs each in its sandbox pool and answers
 * (platform/scale-out's `NatsWorker`, started by the composition root's `startWorker`). Its settings resolve as
 * serve's do (config.ts's `resolveWorkerConfig`; the flags and their help come from settings.ts): flags, then
 * the environment, then the deployment's `subako.config.json` (the shared keys at its top level, the worker's
 * own in its `worker` object). It needs the API replicas' sealing key (SUBAKO_SECRET_KEY) to open a call's
 * credentials, and the same volumes file system at its volumes root. SIGINT or SIGTERM: no new calls, those
 * running finish, then it exits.
 */
import type { Command } from 'commander';
import { SealError, systemErrorCode } from '../common/index.js';
import { SubakoError, ValidationError } from '../errors.js';
import { CONFIG_FILE, defaultWorkerConfig, readConfigFile, resolveWorkerConfig, type WorkerConfig } from '../config.js';
import { startWorker, type StartedWorker } from '../app.js';
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
      let config: WorkerConfig;
      let started: StartedWorker;
      try {
        config = resolveWorkerConfig({
          defaults: defaultWorkerConfig(), file: readConfigFile(flags.config), env: process.env, flags: settingFlags(command, 'worker'),
        });
        started = await startWorker(config, { env: process.env, log });
      } catch (err) {
        process.stderr.write(`subako worker: cannot start: ${startLine(err)}\n`);
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      const { worker: running, metrics } = started;
      // The "taking calls" line comes last: whoever waits for it (a supervisor, a test) finds the others there.
      process.stdout.write(`${metrics ? `metrics: ${metrics.url}\n` : ''}volumes: ${config.volumesDir}\nsubako worker ${running.name} taking calls on ${started.calls} (${config.pool} at once)\n`);
      await untilStopped(ctx, log, () => started.close());
      log(`stopped after ${running.answered} calls`);
    });
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
