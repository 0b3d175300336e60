/**
 * The command line of a pull, as flags come in and as the generated file's header records it. Pure.
 * Header values are credentials: the header names the flag, never the value.
 */
import { UsageError } from '../../errors.js';

export interface PullCommand {
  url: string;
  out: string;
  /** `--header` flags as given, `Name=value`. */
  headers?: readonly string[];
  oauth?: string;
}

/** `--header Name=value` flags → a record (a later flag for the same name wins). */
export function parseHeaderFlags(flags: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at <= 0) throw new UsageError(`--header takes Name=value, got "${flag.slice(0, at < 0 ? 40 : at)}${at < 0 && flag.length > 40 ? '…' : ''}"`);
    headers[flag.slice(0, at).trim()] = flag.slice(at + 1);
  }
  return headers;
}

/** POSIX-shell quoting, only when needed, so the recorded command can be pasted back. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_\/.:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command as the generated file's header shows it: header values replaced by a placeholder. */
export function describePullCommand(command: PullCommand): string {
  const words = ['subako', 'mcp', 'pull', '--url', command.url, '--out', command.out];
  for (const flag of command.headers ?? []) {
    const at = flag.indexOf('=');
    const name = at < 0 ? flag : flag.slice(0, at);
    words.push('--header', `${name.trim()}=<value>`);
  }
  if (command.oauth !== undefined) words.push('--oauth', command.oauth);
  return words.map(shellQuote).join(' ');
}
