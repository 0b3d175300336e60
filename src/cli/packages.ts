/**
 * `subako packages list|get|create|delete`: the server's function packages. `create` uploads a bundle (a
 * directory is checked and packed first exactly as `subako pack` packs it), the one path `subako push` takes
 * (package-bundle.ts); the server runs the checks and discovery.
 */
import type { Command } from 'commander';
import type { PackageSummaryView, PackageTool, PackageView } from '../server/api/index.js';
import { clientFor, platformCommand, type ConnectionFlags } from './api-client.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { bundleFor, uploadBundle } from './package-bundle.js';
import { print, printFields, printTable } from './output.js';

const path = (name: string, version?: string): string =>
  `/v1/packages/${encodeURIComponent(name)}${version === undefined ? '' : `/versions/${encodeURIComponent(version)}`}`;

export function registerPackages(program: Command, ctx: CommandContext): void {
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
      const body = await bundleFor(bundle, false, 'packages create');
      if (!body) {
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      const { published: pkg, fresh } = await uploadBundle(client, 'packages', body);
      print(flags.json, pkg, () => {
        process.stdout.write(`package ${pkg.name}@${pkg.version} ${fresh ? 'published' : 'already published'}\n`);
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
