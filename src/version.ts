import { readFileSync } from 'node:fs';

/** subako's own version, read once from package.json (the clientInfo the guests see carries it). */
export const SUBAKO_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
