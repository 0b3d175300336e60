/**
 * egress/ (request parsing, policy, the fetch, redirects, outputs: about twenty files), loaded by the first call
 * that is given egress rather than with the function room: most calls — and a fresh process's first call, unless
 * it may reach the network — never need it.
 */
let room: Promise<typeof import('../egress/index.js')> | null = null;

export function loadEgress(): Promise<typeof import('../egress/index.js')> {
  room ??= import('../egress/index.js');
  return room;
}
