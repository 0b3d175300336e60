/**
 * `subako login --server URL [--profile NAME]`: checks an API key against the server and stores the pair
 * as a profile (mode 0600 under the data home) that the platform commands use. The key comes from
 * $SUBAKO_API_KEY, else is asked for on the terminal without echo, else is read from stdin's first line.
 */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { KeyView } from '../server/api/index.js';
import { ApiClient, DEFAULT_SERVER, normalizeServer, profileName, writeProfile } from './api-client.js';
import { printJson } from './output.js';
import { readSecret } from './secret-input.js';

interface LoginFlags {
  server?: string;
  profile?: string;
  json?: boolean;
}

export function registerLogin(program: Command): void {
  program
    .command('login')
    .description('Check an API key against a server and keep both as a profile for the platform commands.')
    .option('--server <url>', `the server (default $SUBAKO_SERVER or ${DEFAULT_SERVER})`)
    .option('--profile <name>', 'store it under this name (default $SUBAKO_PROFILE or "default")')
    .option('--json', 'print {"server","profile","key"} (the key\'s id, prefix and scope) as JSON')
    .action(async (flags: LoginFlags) => {
      const server = normalizeServer(flags.server ?? process.env.SUBAKO_SERVER ?? DEFAULT_SERVER);
      const name = profileName(flags);
      const apiKey = (process.env.SUBAKO_API_KEY || (await readSecret(`API key for ${server}: `))).trim();
      if (apiKey === '') throw new UsageError('no API key given: type it when asked, or set SUBAKO_API_KEY');
      const key = await new ApiClient(server, apiKey).request<KeyView>('GET', '/v1/keys/current');
      const path = writeProfile(name, { server, apiKey });
      if (flags.json) printJson({ server, profile: name, path, key });
      else process.stdout.write(`logged in to ${server} with ${key.prefix}… (${key.id}, scope ${key.scope}); profile "${name}" is ${path}\n`);
    });
}
