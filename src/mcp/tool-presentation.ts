/**
 * What a remote server says of a tool for people and for a client's judgement — its title, its annotations
 * (hints such as `readOnlyHint`), its icons — kept through a session as the server gave them, but only in MCP's
 * shape and within bounds: the server is not trusted, so an unusable field is dropped, never the tool. Pure.
 */

const MAX_TITLE_CHARS = 1024;
const MAX_ICONS = 8;
/** An icon's `src` may be a data: URI; past this it is dropped. */
const MAX_ICON_SRC_CHARS = 64 * 1024;
const MAX_SHORT_CHARS = 256;
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function toolTitleOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_TITLE_CHARS ? value : undefined;
}

/** MCP's ToolAnnotations: the four hints (booleans) and a title, nothing else. */
export function toolAnnotationsOf(value: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(value)) return undefined;
  const kept: Record<string, unknown> = {};
  const title = toolTitleOf(value.title);
  if (title !== undefined) kept.title = title;
  for (const hint of HINTS) if (typeof value[hint] === 'boolean') kept[hint] = value[hint];
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** MCP's icons: `src` (an https or data: URI), with `mimeType`, `sizes` and `theme` when well formed; at most eight. */
export function toolIconsOf(value: unknown): Record<string, unknown>[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const icons: Record<string, unknown>[] = [];
  for (const raw of value.slice(0, MAX_ICONS)) {
    if (!isPlainObject(raw) || typeof raw.src !== 'string' || raw.src.length > MAX_ICON_SRC_CHARS || !/^(https:|data:)/i.test(raw.src)) continue;
    const icon: Record<string, unknown> = { src: raw.src };
    if (typeof raw.mimeType === 'string' && raw.mimeType.length <= MAX_SHORT_CHARS) icon.mimeType = raw.mimeType;
    if (Array.isArray(raw.sizes) && raw.sizes.length <= 16 && raw.sizes.every((s) => typeof s === 'string' && s.length <= 32)) icon.sizes = [...raw.sizes];
    if (raw.theme === 'light' || raw.theme === 'dark') icon.theme = raw.theme;
    icons.push(icon);
  }
  return icons.length > 0 ? icons : undefined;
}
