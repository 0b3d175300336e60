/**
 * An object's entries whose value is not `undefined`: what to spread over defaults so that an option left out
 * (or set to `undefined` by a flag nobody gave) keeps the default instead of replacing it with `undefined`.
 */
export function withoutUndefined<T extends object>(input: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(input ?? {}).filter(([, value]) => value !== undefined)) as Partial<T>;
}
