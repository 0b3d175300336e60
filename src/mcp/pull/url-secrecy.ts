/**
 * What `subako mcp pull` names when a server URL may not be written into the generated file: the environment
 * variable that holds it instead. The rule of which URLs are secret is common/url-secrecy.ts, shared with every
 * place a URL is shown.
 */
export { classifyServerUrl, isPlainSegment, type UrlSecrecy } from '../../common/index.js';

/**
 * The environment variable a generated file reads its URL from: `SUBAKO_<NAME>_URL`, NAME from the output
 * file's name (`github-tools.ts` → `SUBAKO_GITHUB_TOOLS_URL`).
 */
export function urlVariableFor(outFile: string): string {
  const base = outFile.split(/[\\/]/).pop() ?? '';
  const stem = base.replace(/\.(?:[cm]?ts|tsx)$/i, '').toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return `SUBAKO_${stem === '' ? 'MCP' : stem}_URL`;
}

const VARIABLE = /^[A-Z_][A-Z0-9_]*$/;

/** Checks a variable name given by the user; throws TypeError naming what is accepted. */
export function checkUrlVariable(name: string): string {
  if (!VARIABLE.test(name)) throw new TypeError(`"${name}" is not an environment variable name: use capitals, digits and _ (e.g. SUBAKO_TOOLS_URL)`);
  return name;
}
