/**
 * The command line of a pull as the generated file's header records it. Pure. Header values are
 * credentials: the header keeps the flag and the header's name, never its value. A URL that may carry a
 * token is recorded as the environment variable that holds it (`--url "$SUBAKO_TOOLS_URL"`).
 */

export interface PullCommand {
  url: string;
  out: string;
  /** The names of the `--header` flags given (their values are left out). */
  headerNames?: readonly string[];
  oauth?: string;
  /** Set when the URL stays out of the file: the variable recorded in its place. */
  urlVariable?: string;
  /** Whether `--url-env` was given (recorded so the command reproduces the file). */
  urlEnvFlag?: boolean;
}

/** POSIX-shell quoting, only when needed, so the recorded command can be pasted back. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_\/.:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command as the generated file's header shows it, e.g. `subako mcp pull --url U --out F --header 'Authorization=<value>'`. */
export function describePullCommand(command: PullCommand): string {
  const url = command.urlVariable === undefined ? shellQuote(command.url) : `"$${command.urlVariable}"`;
  const words = ['--out', command.out];
  for (const name of command.headerNames ?? []) words.push('--header', `${name}=<value>`);
  if (command.oauth !== undefined) words.push('--oauth', command.oauth);
  if (command.urlEnvFlag === true && command.urlVariable !== undefined) words.push('--url-env', command.urlVariable);
  return ['subako mcp pull --url', url, ...words.map(shellQuote)].join(' ');
}
