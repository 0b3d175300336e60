import type { Command } from 'commander';
import type { CommandContext } from './main.js';

/** `subako check <path>`: the module checks and manifest checks (the wasm/ owner fills this in). */
export function registerCheck(program: Command, ctx: CommandContext): void {
  void program;
  void ctx;
}
