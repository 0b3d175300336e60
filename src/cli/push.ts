/**
 * `subako push <bundle-or-dir> [--skill] [--agent ID]`: uploads a bundle (a package directory is checked and
 * packed first, exactly as `subako pack` does: package-bundle.ts, the path `packages create` takes too) to a
 * platform server, which runs the checks and discovery again; prints `name@version` and the tools it accepted,
 * or its problems. The server and key are found as every platform command finds them (api-client.ts: --server,
 * $SUBAKO_SERVER, the `subako login` profile; $SUBAKO_API_KEY or the profile), `--api-key` over them.
 * `--agent ID` then publishes that agent's next version with the package at the version just pushed
 * (cli/agent-update.ts); sessions already started keep their version, new sessions get the new one.
 */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { AgentView } from '../server/api/index.js';
import { agentInputWithPackage } from './agent-update.js';
import { ApiError, clientFor, platformCommand, type ApiClient, type ConnectionFlags } from './api-client.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { bundleFor, uploadBundle } from './package-bundle.js';
import { printJson } from './output.js';

interface PushFlags extends ConnectionFlags {
  apiKey?: string;
  skill?: boolean;
  agent?: string;
}

/** Publishes the agent's next version with `name@version`; prints it. Refusals throw ApiError naming the agent. */
async function updateAgent(client: ApiClient, agentId: string, pkg: { name: string; version: string }): Promise<AgentView | null> {
  const path = `/v1/agents/${encodeURIComponent(agentId)}`;
  const refused = (what: string) => (error: unknown): never => {
    if (!(error instanceof ApiError) || error.status === null) throw error;
    throw new ApiError(error.code, `${what} refused (HTTP ${error.status}): ${error.message}`, error.status);
  };
  const current = await client.request<AgentView>('GET', path).catch(refused(`agent ${agentId}`));
  if (!current.spec) throw new ApiError('no_spec', `agent ${agentId} refused (HTTP 200): the server did not answer its spec`);
  const change = agentInputWithPackage(current.spec, pkg);
  if (change.previous === pkg.version) {
    process.stdout.write(`agent ${agentId} already grants ${pkg.name}@${pkg.version} (version ${current.version}); no new version published\n`);
    return null;
  }
  const updated = await client.request<AgentView>('PUT', path, { json: change.input }).catch(refused(`the new version of agent ${agentId}`));
  const from = change.added ? 'added' : `was ${change.previous}`;
  process.stdout.write(`agent ${agentId} version ${updated.version}: ${pkg.name}@${pkg.version} (${from}); `
    + `sessions already started keep version ${current.version}, new sessions get ${updated.version}\n`);
  return updated;
}

export function registerPush(program: Command, ctx: CommandContext): void {
  platformCommand(program
    .command('push')
    .description('Upload a package (or, with --skill, a skill) bundle to a subako server; --agent also publishes an agent version with it.')
    .argument('<bundle>', 'a .tar.gz made by `subako pack`, or a directory to pack first')
    .option('--api-key <key>', 'an API key, over $SUBAKO_API_KEY and the profile\'s (better: subako login)')
    .option('--skill', 'upload to /v1/skills instead of /v1/packages')
    .option('--agent <id>', "then publish this agent's next version with the pushed package version (new sessions get it)"))
    .action(async (bundle: string, flags: PushFlags) => {
      if (flags.skill && flags.agent) throw new UsageError('--agent updates an agent with a package; push a skill without it');
      const client = clientFor(flags, flags.apiKey ? { ...process.env, SUBAKO_API_KEY: flags.apiKey } : process.env);
      const body = await bundleFor(bundle, flags.skill === true, 'push');
      if (!body) {
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      const kind = flags.skill ? 'skill' : 'package';
      const { published, fresh } = await uploadBundle(client, flags.skill ? 'skills' : 'packages', body).catch((error: unknown) => {
        if (!(error instanceof ApiError) || error.status === null) throw error;
        throw new ApiError(error.code, `the ${kind} was refused: ${error.message}`, error.status);
      });
      if (!flags.json) {
        process.stdout.write(`${kind} ${published.name}@${published.version} ${fresh ? 'published' : 'already published'}\n`);
        for (const tool of 'tools' in published ? published.tools : []) {
          process.stdout.write(`  ${tool.name}${tool.description ? `: ${tool.description}` : ''}\n`);
        }
      }
      const agent = flags.agent ? await updateAgent(client, flags.agent, { name: published.name, version: published.version }) : null;
      if (flags.json) printJson({ [kind]: published, published: fresh, ...(agent ? { agent } : {}) });
    });
}
