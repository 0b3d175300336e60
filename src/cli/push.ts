/**
 * `subako push <bundle-or-dir> --server URL [--api-key K] [--skill]`: uploads a bundle (a directory is
 * packed first) to a platform server. The server runs the checks and discovery; their problems are printed.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { systemErrorCode } from '../common/index.js';
import { UsageError } from '../errors.js';
import { BundleError, packBundle } from '../package/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';

interface PushFlags {
  server?: string;
  apiKey?: string;
  skill?: boolean;
}

export function registerPush(program: Command, ctx: CommandContext): void {
  program
    .command('push')
    .description('Upload a package (or, with --skill, a skill) bundle to a subako server.')
    .argument('<bundle>', 'a .tar.gz made by `subako pack`, or a directory to pack first')
    .option('--server <url>', 'the server (default $SUBAKO_SERVER or http://127.0.0.1:7070)')
    .option('--api-key <key>', 'an API key (default $SUBAKO_API_KEY)')
    .option('--skill', 'upload to /v1/skills instead of /v1/packages')
    .action(async (bundle: string, flags: PushFlags) => {
      const server = (flags.server ?? process.env.SUBAKO_SERVER ?? 'http://127.0.0.1:7070').replace(/\/+$/, '');
      const apiKey = flags.apiKey ?? process.env.SUBAKO_API_KEY;
      if (!apiKey) throw new UsageError('an API key is needed: pass --api-key or set SUBAKO_API_KEY');
      let url: URL;
      try {
        url = new URL(`${server}/v1/${flags.skill ? 'skills' : 'packages'}`);
      } catch (error) {
        if (!(error instanceof TypeError)) throw error; // expected: not a URL
        throw new UsageError(`--server ${server} is not a URL`);
      }
      const path = resolve(bundle);
      const info = await stat(path).catch((error: unknown) => {
        const code = systemErrorCode(error);
        if (code === undefined) throw error;
        if (code === 'ENOENT' || code === 'ENOTDIR') return null;
        throw new UsageError(`${bundle} cannot be read (${code})`);
      });
      if (!info) throw new UsageError(`${bundle} does not exist`);
      let body: Buffer;
      try {
        body = info.isDirectory() ? await packBundle(path) : await readFile(path);
      } catch (err) {
        if (!(err instanceof BundleError)) throw err;
        for (const problem of err.problems) process.stderr.write(`subako push: ${problem.message} [${problem.code}]\n`);
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/gzip' },
          body: new Uint8Array(body),
        });
      } catch (err) {
        process.stderr.write(`subako push: ${url.origin} could not be reached (${err instanceof Error ? err.message : String(err)})\n`);
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      // expected: an answer that is not JSON (a proxy's page); it is reported by its status below
      const answer = (await response.json().catch((error: unknown) => {
        if (error instanceof SyntaxError) return null;
        throw error;
      })) as Record<string, any> | null;
      if (!response.ok) {
        const error = answer?.error as { code?: string; message?: string; problems?: { code: string; message: string }[] } | undefined;
        const problems = error?.problems ?? (error ? [{ code: error.code ?? 'error', message: error.message ?? '' }] : []);
        process.stderr.write(`subako push: refused (HTTP ${response.status})\n`);
        for (const problem of problems) process.stderr.write(`  ${problem.message} [${problem.code}]\n`);
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      const kind = flags.skill ? 'skill' : 'package';
      const state = response.status === 201 ? 'published' : 'already published';
      process.stdout.write(`${kind} ${answer?.name}@${answer?.version} ${state}\n`);
      for (const tool of (answer?.tools ?? []) as { name: string; description?: string }[]) {
        process.stdout.write(`  ${tool.name}${tool.description ? `: ${tool.description}` : ''}\n`);
      }
    });
}
