/** `--header NAME=VALUE`, shared by `subako mcp` and `subako mcp pull`. */
import { UsageError } from '../errors.js';
import { Secret } from '../mcp/index.js';

/** `NAME=VALUE` (or `NAME: VALUE`) into a header; the value is never echoed, even in a usage error. */
export function parseHeaderFlag(flag: string): [string, Secret] {
  const match = /^\s*([^=:\s]+)\s*(?:=|:)\s?([\s\S]*)$/.exec(flag);
  if (!match) throw new UsageError('--header takes NAME=VALUE (the value is not shown here)');
  return [match[1], new Secret(match[2])];
}
