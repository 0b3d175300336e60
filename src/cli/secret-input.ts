/**
 * A secret typed or piped in, never taken from a flag (a flag stays in the shell's history and shows in `ps`):
 * on a terminal, asked for with a prompt on stderr and read without echo; otherwise read from stdin — its first
 * line, or (`whole`) all of it without its last line end, for a JSON payload.
 */
import { UsageError } from '../errors.js';

export async function readSecret(prompt: string, options: { whole?: boolean } = {}): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) {
      text += String(chunk);
      if (!options.whole && text.includes('\n')) break;
    }
    return options.whole ? text.replace(/\r?\n$/, '') : text.split('\n')[0];
  }
  process.stderr.write(prompt);
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
            reject(new UsageError('cancelled'));
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
