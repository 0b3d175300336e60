/**
 * `subako agents list|get|create|update|delete`: the server's agents. `create` takes the agent's spec as a JSON
 * file (the API's body: name, description, tools, mcp_servers, skills, vaults), or the common case from
 * flags: a name and the packages it grants. `update <name> --spec FILE` publishes the agent's next version
 * from a whole spec (PUT /v1/agents/{id}); sessions already started keep the version they began on.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { systemErrorCode } from '../common/index.js';
import { UsageError } from '../errors.js';
import type { AgentInput, AgentView } from '../server/api/index.js';
import { ApiError, clientFor, platformCommand, type ApiClient, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerAgents(program: Command): void {
  const agents = program.command('agents').description('The server\'s agents: list, get, create, update (publish a version), delete.');
  platformCommand(agents.command('list').description('List agents.'))
    .action(async (flags: ConnectionFlags) => {
      const items = await clientFor(flags).list<AgentView>('/v1/agents');
      print(flags.json, items, () => printTable(items, [
        ['ID', (a) => a.id], ['NAME', (a) => a.name], ['VERSION', (a) => a.version], ['UPDATED', (a) => a.updated_at],
      ]));
    });
  platformCommand(agents.command('get').description('An agent with its current version\'s spec.'))
    .argument('<id>', 'the agent id (agt_…)')
    .action(async (id: string, flags: ConnectionFlags) => {
      const agent = await clientFor(flags).request<AgentView>('GET', `/v1/agents/${encodeURIComponent(id)}`);
      print(flags.json, agent, () => printFields([
        ['id', agent.id], ['name', agent.name], ['version', agent.version], ['created', agent.created_at], ['updated', agent.updated_at],
        ['spec', agent.spec],
      ]));
    });
  platformCommand(agents.command('create').description('Create an agent from a spec file, or from --name and --package flags.'))
    .option('--file <spec.json>', 'the agent spec as the API takes it (see /v1/openapi.json, createAgent)')
    .option('--name <name>', 'the agent\'s name (without --file)')
    .option('--description <text>', 'what the agent is for (without --file)')
    .option('--package <name[@version]>', 'a package the agent grants, "latest" without a version (repeatable)', collect, [])
    .action(async (flags: ConnectionFlags & { file?: string; name?: string; description?: string; package: string[] }) => {
      const spec = flags.file !== undefined ? await readSpec(flags.file) : specFromFlags(flags);
      const agent = await clientFor(flags).request<AgentView>('POST', '/v1/agents', { json: spec });
      print(flags.json, agent, () => process.stdout.write(`agent ${agent.name} created: ${agent.id} (version ${agent.version})\n`));
    });
  platformCommand(agents.command('update').description('Publish an agent\'s next version from a spec file; new sessions get it.'))
    .argument('<agent>', 'the agent\'s name, or its id (agt_…)')
    .requiredOption('--spec <spec.json>', 'the whole next spec as the API takes it (see /v1/openapi.json, updateAgent); its name may be left out')
    .action(async (named: string, flags: ConnectionFlags & { spec: string }) => {
      const spec = await readSpec(flags.spec, '--spec');
      if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new UsageError(`--spec ${flags.spec} must hold a JSON object (the agent's spec)`);
      const client = clientFor(flags);
      const current = await findAgent(client, named);
      const body = spec as Record<string, unknown>;
      if (body.name !== undefined && body.name !== current.name) {
        throw new UsageError(`--spec ${flags.spec} names the agent ${JSON.stringify(body.name)}, not ${JSON.stringify(current.name)}; leave "name" out or make it the agent's`);
      }
      const updated = await client.request<AgentView>('PUT', `/v1/agents/${encodeURIComponent(current.id)}`, { json: { ...body, name: current.name } });
      print(flags.json, updated, () => process.stdout.write(
        `agent ${updated.name} version ${updated.version} published (${current.id}); sessions already started keep version ${current.version}, new sessions get ${updated.version}\n`,
      ));
    });
  platformCommand(agents.command('delete').description('Delete an agent, its sessions (and their volumes) and its /volume/data.'))
    .argument('<id>', 'the agent id (agt_…)')
    .action(async (id: string, flags: ConnectionFlags) => {
      await clientFor(flags).request('DELETE', `/v1/agents/${encodeURIComponent(id)}`);
      print(flags.json, { deleted: id }, () => process.stdout.write(`deleted ${id}\n`));
    });
}

function specFromFlags(flags: { name?: string; description?: string; package: string[] }): AgentInput {
  if (flags.name === undefined) throw new UsageError('give the agent a --name (or its whole spec with --file)');
  const tools = flags.package.map((grant) => {
    const at = grant.lastIndexOf('@');
    return at > 0 ? { package: grant.slice(0, at), version: grant.slice(at + 1) } : { package: grant, version: 'latest' };
  });
  return { name: flags.name, ...(flags.description !== undefined ? { description: flags.description } : {}), tools };
}

/** The agent a line names: by id (agt_…), or by name among the server's agents. */
async function findAgent(client: ApiClient, named: string): Promise<AgentView> {
  if (named.startsWith('agt_')) {
    try {
      return await client.request<AgentView>('GET', `/v1/agents/${encodeURIComponent(named)}`);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
      throw new ApiError('agent_not_found', `no agent ${named} on ${client.server}; subako agents list shows them`, 404);
    }
  }
  const found = (await client.list<AgentView>('/v1/agents')).filter((a) => a.name === named);
  if (found.length === 0) throw new ApiError('agent_not_found', `no agent named ${JSON.stringify(named)} on ${client.server}; subako agents list shows them`, 404);
  if (found.length > 1) throw new UsageError(`${found.length} agents are named ${JSON.stringify(named)} (${found.map((a) => a.id).join(', ')}); name one by its id`);
  return found[0];
}

/** The spec file as it is: the server checks it against AgentInput's schema and says what is wrong. */
async function readSpec(file: string, flag = '--file'): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === undefined) throw error;
    throw new UsageError(`${flag} ${file} cannot be read (${code})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
    throw new UsageError(`${flag} ${file} is not JSON (${error.message})`);
  }
}
