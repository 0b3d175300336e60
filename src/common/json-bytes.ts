/**
 * The size of a value as JSON text, in UTF-8 bytes: what every budget on JSON (a call log's preview, a task's
 * kept result, a tool's schema, a page of a list, arguments shown to an approver) is counted in. A value with no
 * JSON text (undefined) counts as `null`, the four bytes it would take where a value is required.
 */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}
