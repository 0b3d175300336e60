/**
 * Small pieces of TypeScript source text that are easy to get subtly wrong: string literals, property
 * keys and doc comments holding text a server sent. Nothing a server sends may end a comment or a string
 * early and so become code in the generated module.
 */
import { isPlainPropertyName } from './identifiers.js';

/** A double-quoted string literal. JSON escapes quotes, backslashes and control characters; we add the two
 * line separators, which are legal in a string literal since ES2019 but confuse older tools and editors. */
export function stringLiteral(text: string): string {
  return JSON.stringify(text).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** A property key: bare when it is a plain identifier, quoted otherwise. */
export function propertyKey(name: string): string {
  return isPlainPropertyName(name) ? name : stringLiteral(name);
}

/** A JSON primitive as a TypeScript literal type, or undefined when the value is not a primitive. */
export function literalType(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'string') return stringLiteral(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * A JSDoc block for `text` at `indent`, or no lines when there is no text. `*\/` inside the text is broken
 * up so it cannot close the comment; every kind of line break becomes a new comment line.
 */
export function docComment(text: unknown, indent: string): string[] {
  if (typeof text !== 'string') return [];
  const lines = text
    .replace(/\*\//g, '*\\/')
    .split(/\r\n|\r|\n|\u2028|\u2029/)
    .map((line) => line.replace(/\s+$/, ''));
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) return [];
  if (lines.length === 1) return [`${indent}/** ${lines[0]} */`];
  return [`${indent}/**`, ...lines.map((line) => (line === '' ? `${indent} *` : `${indent} * ${line}`)), `${indent} */`];
}
