/**
 * `subako push <bundle-or-dir> [--server URL] [--api-key K] [--skill] [--agent ID]`: uploads a bundle (a
 * package directory is checked and packed first, as `subako pack` does) to a platform server, which runs the
 * checks and discovery again; prints `name@version` and the tools it accepted, or its problems.
 * `--agent ID` then publishes that agent's next version with the package at the version just pushed
 * (cli/agent-update.ts); sessions already started keep their version, new sessions get the new one.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { systemErrorCode } from '../common/index.js';
import { UsageError } from '../errors.js';
import { BundleError, packBundle } from '../package/index.js';
import { FunctionHost } from '../function/index.js';
import type { AgentInput, AgentView, ErrorBody, PackageView, SkillView } from '../server/api/index.js';
import { isSkillDir } from '../devkit/index.js';
import { agentInputWithPackage } from './agent-update.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { packPackageDir } from './package-bundle.js';

interface PushFlags {
  server?: string;
  apiKey?: string;
  skill?: boolean;
  agent?: string;
}

/** The server's answer: the body its schema declares (server/api/) when it succeeded; its error, if JSON, when not. */
type Answer<Body> = { status: number; ok: true; body: Body } | { status: number; ok: false; body: Partial<ErrorBody> | null };

/** One request to the server's API; null when it could not be reached (said on stderr). */
async function request<Body>(url: URL, apiKey: string, method: string, body?: { json: AgentInput } | { gzip: Uint8Array<ArrayBuffer> }): Promise<Answer<Body> | null> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body ? { 'content-type': 'json' in body ? 'application/json' : 'application/gzip' } : {}),
      },
      ...(body ? { body: 'json' in body ? JSON.stringify(body.json) : body.gzip } : {}),
    });
  } catch (err) {
    process.stderr.write(`subako push: ${url.origin} could not be reached (${err instanceof Error ? err.message : String(err)})\n`);
    return null;
  }
  // expected: an answer that is not JSON (a proxy's page); it is reported by its status
  const parsed: unknown = await response.json().catch((error: unknown) => {
    if (error instanceof SyntaxError) return null;
    throw error;
  });
  // A success answers the route's declared body; a refusal the error body, or something else that is not JSON.
  return response.ok ? { status: response.status, ok: true, body: parsed as Body } : { status: response.status, ok: false, body: parsed as Partial<ErrorBody> | null };
}

function reportRefusal(what: string, answer: { status: number; body: Partial<ErrorBody> | null }): void {
  const error = answer.body?.error;
  const problems = error?.problems ?? (error ? [{ code: error.code ?? 'error', message: error.message ?? '' }] : []);
  process.stderr.write(`subako push: ${what} refused (HTTP ${answer.status})\n`);
  for (const problem of problems) process.stderr.write(`  ${problem.message} [${problem.code}]\n`);
}

async function bundleBytes(bundle: string, skill: boolean, ctx: CommandContext): Promise<Buffer | null> {
  const path = resolve(bundle);
  const info = await stat(path).catch((error: unknown) => {
    const code = systemErrorCode(error);
    if (code === undefined) throw error;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new UsageError(`${bundle} cannot be read (${code})`);
  });
  if (!info) throw new UsageError(`${bundle} does not exist`);
  if (!info.isDirectory()) return readFile(path);
  if (await isSkillDir(path) !== skill) {
    throw new UsageError(skill ? `${bundle} is no skill directory (it has no SKILL.md, or it has a subako-package.json); push a package without --skill` : `${bundle} is a skill directory (SKILL.md); push it with --skill`);
  }
  if (skill) {
    try {
      return await packBundle(path);
    } catch (err) {
      if (!(err instanceof BundleError)) throw err;
      for (const problem of err.problems) process.stderr.write(`subako push: ${problem.message} [${problem.code}]\n`);
      ctx.exitCode = EXIT_FAILED;
      return null;
    }
  }
  const host = new FunctionHost({ poolSize: 1, isolation: 'thread' });
  try {
    const packed = await packPackageDir(bundle, host, 'push');
    if (!packed) ctx.exitCode = EXIT_FAILED;
    return packed?.archive ?? null;
  } finally {
    await host.close();
  }
}

/** Publishes the agent's next version with `name@version`; prints it. False when it failed (said on stderr). */
async function updateAgent(base: string, apiKey: string, agentId: string, pkg: { name: string; version: string }): Promise<boolean> {
  const agentUrl = new URL(`${base}/v1/agents/${encodeURIComponent(agentId)}`);
  const current = await request<AgentView>(agentUrl, apiKey, 'GET');
  if (!current) return false;
  if (!current.ok) {
    reportRefusal(`agent ${agentId}`, current);
    return false;
  }
  const { spec } = current.body;
  if (!spec) {
    reportRefusal(`agent ${agentId}`, { status: current.status, body: null });
    return false;
  }
  const change = agentInputWithPackage(spec, pkg);
  if (change.previous === pkg.version) {
    process.stdout.write(`agent ${agentId} already grants ${pkg.name}@${pkg.version} (version ${current.body.version}); no new version published\n`);
    return true;
  }
  const updated = await request<AgentView>(agentUrl, apiKey, 'PUT', { json: change.input });
  if (!updated) return false;
  if (!updated.ok) {
    reportRefusal(`the new version of agent ${agentId}`, updated);
    return false;
  }
  const from = change.added ? 'added' : `was ${change.previous}`;
  process.stdout.write(`agent ${agentId} version ${updated.body?.version}: ${pkg.name}@${pkg.version} (${from}); `
    + `sessions already started keep version ${current.body.version}, new sessions get ${updated.body?.version}\n`);
  return true;
}

export function registerPush(program: Command, ctx: CommandContext): void {
  program
    .command('push')
    .description('Upload a package (or, with --skill, a skill) bundle to a subako server; --agent also publishes an agent version with it.')
    .argument('<bundle>', 'a .tar.gz made by `subako pack`, or a directory to pack first')
    .option('--server <url>', 'the server (default $SUBAKO_SERVER or http://127.0.0.1:7070)')
    .option('--api-key <key>', 'an API key (default $SUBAKO_API_KEY)')
    .option('--skill', 'upload to /v1/skills instead of /v1/packages')
    .option('--agent <id>', "then publish this agent's next version with the pushed package version (new sessions get it)")
    .action(async (bundle: string, flags: PushFlags) => {
      const server = (flags.server ?? process.env.SUBAKO_SERVER ?? 'http://127.0.0.1:7070').replace(/\/+$/, '');
      const apiKey = flags.apiKey ?? process.env.SUBAKO_API_KEY;
      if (!apiKey) throw new UsageError('an API key is needed: pass --api-key or set SUBAKO_API_KEY');
      if (flags.skill && flags.agent) throw new UsageError('--agent updates an agent with a package; push a skill without it');
      let url: URL;
      try {
        url = new URL(`${server}/v1/${flags.skill ? 'skills' : 'packages'}`);
      } catch (error) {
        if (!(error instanceof TypeError)) throw error; // expected: not a URL
        throw new UsageError(`--server ${server} is not a URL`);
      }
      const body = await bundleBytes(bundle, flags.skill === true, ctx);
      if (!body) return;
      const answer = await request<PackageView | SkillView>(url, apiKey, 'POST', { gzip: new Uint8Array(body) });
      if (!answer || !answer.ok) {
        if (answer) reportRefusal(flags.skill ? 'the skill' : 'the package', answer);
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      const kind = flags.skill ? 'skill' : 'package';
      const state = answer.status === 201 ? 'published' : 'already published';
      const published = answer.body;
      process.stdout.write(`${kind} ${published.name}@${published.version} ${state}\n`);
      for (const tool of 'tools' in published ? published.tools : []) {
        process.stdout.write(`  ${tool.name}${tool.description ? `: ${tool.description}` : ''}\n`);
      }
      if (flags.agent && !(await updateAgent(server, apiKey, flags.agent, { name: published.name, version: published.version }))) {
        ctx.exitCode = EXIT_FAILED;
      }
    });
}
