/**
 * `subako admin-key [--data-dir DIR]`: mints a new admin API key straight into a server's data directory,
 * without the server, for an operator who lost theirs. Prints it once. Whoever can write the data directory
 * owns the server anyway; this needs nothing more.
 */
import type { Command } from 'commander';
import { defaultServerConfig } from '../config.js';
import { SubakoError } from '../errors.js';
import { mintAdminKey } from '../platform/index.js';
import { CommandFailure } from './command-context.js';
import { printJson } from './output.js';

export function registerAdminKey(program: Command): void {
  program
    .command('admin-key')
    .description('Mint a new admin API key in a server\'s data directory, offline (for a lost key); prints it once.')
    .option('--data-dir <dir>', 'the server\'s data directory (default $SUBAKO_DATA_DIR or ~/.subako/server)')
    .option('--json', 'print {"id","key"} as JSON')
    .action(async (flags: { dataDir?: string; json?: boolean }) => {
      const dataDir = flags.dataDir ?? (process.env.SUBAKO_DATA_DIR || defaultServerConfig().dataDir);
      let minted;
      try {
        minted = await mintAdminKey(dataDir);
      } catch (err) {
        if (err instanceof SubakoError && err.code === 'no_data_dir') throw new CommandFailure(err.code, err.message);
        throw err;
      }
      if (flags.json) printJson({ id: minted.record.id, key: minted.key });
      else process.stdout.write(`A new admin API key (${minted.record.id}) for the server on ${dataDir}. It is shown only this once; keep it:\n  ${minted.key}\n`);
    });
}
