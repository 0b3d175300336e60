/**
 * The form of an end user's id. The operator's application chooses it (its own account id, an identity
 * provider's subject), so it is checked, not made: it appears in URL paths (`/v1/users/{id}`), in the console
 * and in logs, and must stay one path segment that reads as itself.
 */
import { ValidationError } from '../errors.js';

export const MAX_USER_ID_CHARS = 128;

/** A letter or digit first (never `.` or `..`, never a flag), then letters, digits and `. _ - @ : | + =`. */
const USER_ID = /^[A-Za-z0-9][A-Za-z0-9._@:|+=-]*$/;

export const USER_ID_RULE = `1-${MAX_USER_ID_CHARS} characters of A-Z a-z 0-9 and . _ - @ : | + =, beginning with a letter or digit`;

export function isUserId(text: unknown): text is string {
  return typeof text === 'string' && text.length >= 1 && text.length <= MAX_USER_ID_CHARS && USER_ID.test(text);
}

/** The id as given, or a ValidationError (`user.id`) naming the rule. */
export function checkUserId(text: unknown, where = 'id'): string {
  if (isUserId(text)) return text;
  const shown = typeof text === 'string' ? JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text) : String(text);
  throw new ValidationError([{ code: 'user.id', message: `${where} ${shown} is not a user id: use ${USER_ID_RULE}` }]);
}
