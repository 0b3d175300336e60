/**
 * The "https or loopback" rule for a URL subako sends credentials to (a remote MCP server, an OAuth token
 * endpoint): https anywhere; plain http only to the loopback interface, named literally (localhost,
 * 127.0.0.1, [::1]: local servers and tests); never with credentials in the URL itself. A name that merely
 * ends in `.localhost` is not enough here: the resolver decides where it goes, and the bytes are plain.
 */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isHttpsOrLoopback(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    return false;
  }
  if (url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}
