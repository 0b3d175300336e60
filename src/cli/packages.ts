/**
 * `subako packages list|get|create|delete`: the server's function packages. `create` uploads a bundle (a
 * directory is packed first), as `subako push` does; the server runs the checks and discovery.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { systemErrorCode } from '../common/index.js';
import { UsageError } from '../errors.js';
import { BundleError, packBundle } from '../package/index.js';
import type { PackageSummaryView, PackageTool, PackageView } from '../server/api/index.js';
import { ApiError, clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { print, printFields, printTable } from './output.js';

const path = (name: string, version?: string): string =>
  `/v1/packages/${encodeURIComponent(name)}${version === undefined ? '' : `/versions/${encodeURIComponent(version)}`}`;

export function registerPackages(program: Command): void {
  const packages = program.command('packages').description('The server\'s function packages: list, get, create (upload), delete.');
  platformCommand(packages.command('list').description('List package versions.'))
    .action(async (flags: ConnectionFlags) => {
      const items = await clientFor(flags).list<PackageView>('/v1/packages');
      print(flags.json, items, () => printTable(items, [
        ['NAME', (p) => p.name], ['VERSION', (p) => p.version], ['TOOLS', (p) => p.tools.map((t) => t.name).join(', ')],
        ['CREATED', (p) => p.created_at], ['DESCRIPTION', (p) => p.description],
      ]));
    });
  platformCommand(packages.command('get').description('A package (its versions and latest tools), or one version of it.'))
    .argument('<name>', 'the package name')
    .argument('[version]', 'a version, or "latest"; without it, the package as a whole')
    .action(async (name: string, version: string | undefined, flags: ConnectionFlags) => {
      const client = clientFor(flags);
      if (version === undefined) {
        const pkg = await client.request<PackageSummaryView>('GET', path(name));
        print(flags.json, pkg, () => {
          printFields([['name', pkg.name], ['description', pkg.description], ['latest', pkg.latest_version],
            ['versions', pkg.versions.map((v) => v.version).join(', ')]]);
          printTools(pkg.tools);
        });
        return;
      }
      const pkg = await client.request<PackageView>('GET', path(name, version));
      print(flags.json, pkg, () => {
        printFields([['name', pkg.name], ['version', pkg.version], ['description', pkg.description], ['digest', pkg.digest], ['created', pkg.created_at]]);
        printTools(pkg.tools);
      });
    });
  platformCommand(packages.command('create').description('Upload a package bundle (a directory is packed first).'))
    .argument('<bundle>', 'a .tar.gz made by `subako pack`, or a package directory')
    .action(async (bundle: string, flags: ConnectionFlags) => {
      const client = clientFor(flags);
      const body = await readBundle(bundle);
      const pkg = await client.request<PackageView>('POST', '/v1/packages', { body: new Uint8Array(body), contentType: 'application/gzip' });
      print(flags.json, pkg, () => {
        process.stdout.write(`package ${pkg.name}@${pkg.version} published\n`);
        printTools(pkg.tools);
      });
    });
  platformCommand(packages.command('delete').description('Delete a package version (refused while an agent version uses it).'))
    .argument('<name>', 'the package name')
    .argument('<version>', 'the version')
    .action(async (name: string, version: string, flags: ConnectionFlags) => {
      await clientFor(flags).request('DELETE', path(name, version));
      print(flags.json, { deleted: { name, version } }, () => process.stdout.write(`deleted ${name}@${version}\n`));
    });
}

function printTools(tools: PackageTool[]): void {
  process.stdout.write('tools:\n');
  for (const tool of tools) process.stdout.write(`  ${tool.name}${tool.description ? `: ${tool.description}` : ''}\n`);
}

async function readBundle(bundle: string): Promise<Buffer> {
  const file = resolve(bundle);
  const info = await stat(file).catch((error: unknown) => {
    const code = systemErrorCode(error);
    if (code === undefined) throw error;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new UsageError(`${bundle} cannot be read (${code})`);
  });
  if (!info) throw new UsageError(`${bundle} does not exist`);
  try {
    return info.isDirectory() ? await packBundle(file) : await readFile(file);
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    throw new ApiError(err.code, `${bundle} cannot be packed: ${err.problems.map((p) => `${p.message} [${p.code}]`).join('; ')}`);
  }
}
