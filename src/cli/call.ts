/**
 * `subako call <pkg> <tool> [<arguments-json>]`: one function call on this machine, with a volume, skills,
 * and an egress policy. Prints what the model sees (or, with --json, the whole outcome).
 * Exit codes as `subako mcp call`'s (call-exit.ts): 0 a result, 1 a tool error or crash, 2 usage, 3 a refused package.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { subakoHome, systemErrorCode } from '../common/first-call.js';
import { UsageError, ValidationError } from '../errors.js';
import { FunctionHost, type EgressGrant, type FunctionCallContext, type FunctionCallOutcome } from '../function/index.js';
import type { ContentBlock } from '../tool.js';
import type { CommandContext } from './command-context.js';
import { CALL_EXIT, exitOfOutcome } from './call-exit.js';
import { formatProblems, limitsFromFlags, loadFunction } from './load-function.js';

interface CallFlags {
  volume?: string;
  data?: boolean;
  skills?: string;
  timeout?: string;
  memory?: string;
  json?: boolean;
  allow: string[];
  policy?: string;
  allowPrivateDestinations?: boolean;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function parseArguments(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`<arguments-json> is not valid JSON (${(err as Error).message}); pass an object such as '{"name":"Ada"}'`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`<arguments-json> must be a JSON object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`);
  }
  return value as Record<string, unknown>;
}

/**
 * The egress side from --policy, --allow and --allow-private-destinations; null when none is given. The egress
 * room (its policy parser) is loaded only to read a --policy file.
 */
export async function egressFromFlags(flags: CallFlags): Promise<EgressGrant | undefined> {
  if (!flags.policy && flags.allow.length === 0 && !flags.allowPrivateDestinations) return undefined;
  let file = { allow: [] as string[], grants: [] as string[], vault: [] as EgressGrant['credentials'], privateDestinations: 'deny' as 'deny' | 'allow' };
  if (flags.policy) {
    let text: string;
    try {
      text = readFileSync(flags.policy, 'utf8');
    } catch (error) {
      const code = systemErrorCode(error);
      if (code === undefined) throw error;
      throw new UsageError(`--policy ${flags.policy} cannot be read (${code})`);
    }
    const { parseEgressPolicyFile } = await import('../egress/index.js');
    try {
      const parsed = parseEgressPolicyFile(text);
      file = { allow: parsed.allow, grants: parsed.grants, vault: parsed.vault, privateDestinations: parsed.privateDestinations ?? 'deny' };
    } catch (err) {
      if (err instanceof ValidationError) throw new UsageError(`--policy ${flags.policy}: ${err.message}`);
      throw err;
    }
  }
  return {
    allow: [...file.allow, ...flags.allow],
    grants: file.grants,
    credentials: file.vault,
    privateDestinations: flags.allowPrivateDestinations ? 'allow' : file.privateDestinations,
  };
}

function describeBlock(block: ContentBlock): string {
  if (block.type === 'text') return block.text as string;
  if (block.type === 'image') {
    const bytes = Buffer.byteLength(block.data as string, 'base64');
    return `[image ${block.mimeType as string}, ${Math.ceil(bytes / 1024)} KiB]`;
  }
  return `[${block.type}]`;
}

export function formatOutcome(outcome: FunctionCallOutcome): string {
  const head = outcome.status === 'ok' ? '' : outcome.status === 'tool_error' ? 'tool error:\n' : '';
  return `${head}${outcome.model.map(describeBlock).join('\n')}\n`;
}

export function registerCall(program: Command, ctx: CommandContext): void {
  program
    .command('call')
    .description('call one tool of a function package on this machine and print what the model sees')
    .argument('<pkg>', 'a package directory or a .wasm module')
    .argument('<tool>', 'the tool to call')
    .argument('[arguments-json]', 'the arguments, a JSON object (default {})')
    .option('--volume <dir>', 'host directory behind /volume (its tmp/ and data/); default: a fresh temporary one, removed afterwards')
    .option('--data', 'mount /volume/data')
    .option('--skills <dir>', 'each subdirectory is a skill, mounted read-only at /skills/<name>')
    .option('--timeout <ms>', 'the call\'s deadline')
    .option('--memory <MiB>', 'memory cap for the module')
    .option('--allow <host>', 'let the function reach this host (repeatable; *.example.com and :port allowed)', collect, [])
    .option('--policy <file>', 'egress policy JSON: {"allow", "grants", "vault", "privateDestinations"}')
    .option('--allow-private-destinations', 'let requests reach private and loopback addresses (local development only)')
    .option('--json', 'print {"status","result","model","crash","durationMs","egress"} as JSON')
    .action(async (path: string, tool: string, argsText: string | undefined, flags: CallFlags) => {
      const args = parseArguments(argsText);
      const egress = await egressFromFlags(flags);
      // Instrumented modules are kept in the data home, as `serve` keeps them in its data directory: the next
      // `subako call` of the same package reads them back instead of walking the module again. The host is made
      // before the checks are loaded (loadFunction): its sandbox process boots while they load.
      const host = new FunctionHost({ poolSize: 1, limits: limitsFromFlags(flags), preparedCacheDir: join(subakoHome(), 'cache', 'prepared') });
      const volume = flags.volume ? resolve(flags.volume) : mkdtempSync(join(tmpdir(), 'subako-volume-'));
      try {
        const { problems, discovery, loaded } = await loadFunction(path, host);
        if (problems.length > 0 || !discovery?.tools || !loaded) {
          process.stderr.write(`refused: ${path}\n${formatProblems(problems)}\n`);
          ctx.exitCode = CALL_EXIT.notMade;
          return;
        }
        if (!discovery.tools.some((t) => t.name === tool)) {
          process.stderr.write(`subako: ${loaded.source.name} has no tool "${tool}"; it offers: ${discovery.tools.map((t) => t.name).join(', ')}\n`);
          ctx.exitCode = CALL_EXIT.usage;
          return;
        }
        // The volume is this command's: it makes the directories a call mounts.
        const tmpDir = join(volume, 'tmp');
        const dataDir = flags.data ? join(volume, 'data') : undefined;
        for (const dir of [tmpDir, dataDir]) if (dir) mkdirSync(dir, { recursive: true });
        const callCtx: FunctionCallContext = {
          tmpDir,
          dataDir,
          skillsDir: flags.skills ? resolve(flags.skills) : undefined,
          egress,
        };
        const outcome = await host.call(loaded, tool, args, callCtx);
        if (flags.json) {
          const { status, result, model, crash, durationMs, egress: log } = outcome;
          process.stdout.write(`${JSON.stringify({ status, result, model, crash, durationMs, egress: log })}\n`);
        } else {
          process.stdout.write(formatOutcome(outcome));
        }
        ctx.exitCode = exitOfOutcome(outcome.status);
      } finally {
        await host.close();
        if (!flags.volume) rmSync(volume, { recursive: true, force: true });
      }
    });
}
