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
      const apiKey = (process.env.SUBAKO_API_KEY || (await askForKey(server))).trim();
      if (apiKey === '') throw new UsageError('no API key given: type it when asked, or set SUBAKO_API_KEY');
      const key = await new ApiClient(server, apiKey).request<KeyView>('GET', '/v1/keys/current');
      const path = writeProfile(name, { server, apiKey });
      if (flags.json) printJson({ server, profile: name, path, key });
      else process.stdout.write(`logged in to ${server} with ${key.prefix}… (${key.id}, scope ${key.scope}); profile "${name}" is ${path}\n`);
    });
}

/** On a terminal: a prompt on stderr, the key read without echo. Otherwise stdin's first line. */
async function askForKey(server: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) {
      text += String(chunk);
      if (text.includes('\n')) break;
    }
    return text.split('\n')[0];
  }
  process.stderr.write(`API key for ${server}: `);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      const onData = (chunk: string): void => {
        for (const char of chunk) {
          if (char === '\r' || char === '\n') {
            stdin.off('data', onData);
            resolve(typed);
            return;
          }
          if (char === '\u0003') {
            stdin.off('data', onData);
            reject(new UsageError('login cancelled'));
            return;
          }
          if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
          else typed += char;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write('\n');
  }
}
