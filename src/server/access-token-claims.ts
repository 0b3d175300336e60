/**
 * What a checked access token says, read as the platform needs it. Pure.
 *
 * - The user: the configured claim (`sub` by default) is the platform user's id, as the operator's application
 *   and the identity provider agree on it, taken as it is; a value that is not a user id's form is refused by the
 *   platform's users (platform/user-ids.ts), never rewritten, so two subjects can never map to one user.
 * - The scopes: RFC 9068's `scope` (one string, separated by spaces), or the `scp` array some providers send.
 */
export type ClaimsProblem = { kind: 'no_user'; message: string };

/** The user id the claim names (its form checked where users are), or what is wrong with it. */
export function userIdOf(claims: Record<string, unknown>, claim: string): { userId: string } | ClaimsProblem {
  const value = claims[claim];
  if (value === undefined) return { kind: 'no_user', message: `the access token has no ${claim} claim, which names the user here` };
  if (typeof value !== 'string' || value === '') return { kind: 'no_user', message: `the access token's ${claim} claim is not a string, so it names no user here` };
  return { userId: value };
}

/** The scopes the token carries. */
export function scopesOf(claims: Record<string, unknown>): Set<string> {
  const { scope, scp } = claims;
  if (typeof scope === 'string') return new Set(scope.split(' ').filter((s) => s !== ''));
  if (Array.isArray(scp)) return new Set(scp.filter((s): s is string => typeof s === 'string'));
  if (typeof scp === 'string') return new Set(scp.split(' ').filter((s) => s !== ''));
  return new Set();
}

/** The required scopes the token lacks, in the order they were required. */
export function missingScopes(claims: Record<string, unknown>, required: readonly string[]): string[] {
  const held = scopesOf(claims);
  return required.filter((scope) => !held.has(scope));
}
