/**
 * What the call log keeps of what the model saw: each block redacted (text of the session's secrets, an image
 * as its type, size and digest), and the whole bounded like the arguments, at CALL_LOG_PREVIEW_BYTES of JSON.
 * A function may answer up to its 1 MiB of stdout and a remote server up to the answer cap, and every list
 * page and live event carries the record: past the bound the log keeps the blocks that fit, the start of the
 * text block that did not, and a last block saying how much was left out. The caller's result is not cut.
 */
import { createHash } from 'node:crypto';
import type { ContentBlock } from '../../tool.js';
import { CALL_LOG_PREVIEW_BYTES, cutToBytes, jsonBytes, redactArguments, redactText } from '../../common/index.js';

/** Room kept for the last block that says what was left out. */
const NOTE_ROOM = 512;

/** The blocks as the call log keeps them: redacted, and at most CALL_LOG_PREVIEW_BYTES of JSON in all. */
export function loggedModel(content: readonly ContentBlock[], secrets: readonly string[]): unknown[] {
  const blocks = content.map((block) => loggable(block, secrets));
  const sizes = blocks.map(jsonBytes);
  // The array's brackets and commas count too.
  const total = sizes.reduce((sum, size) => sum + size + 1, 1);
  if (total <= CALL_LOG_PREVIEW_BYTES) return blocks;

  const budget = CALL_LOG_PREVIEW_BYTES - NOTE_ROOM;
  const kept: unknown[] = [];
  let used = 1;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (used + sizes[i] + 1 <= budget) {
      kept.push(block);
      used += sizes[i] + 1;
      continue;
    }
    const cut = isText(block) ? cutText(block.text, budget - used - 1) : null;
    if (cut !== null) {
      kept.push(cut);
      used += jsonBytes(cut) + 1;
    }
    break;
  }
  const left = total - used;
  kept.push({
    type: 'text',
    truncated: true,
    text: `[${left} of the ${total} bytes of what the model saw were left out of the call log, which keeps ${CALL_LOG_PREVIEW_BYTES / 1024} KiB of a result; the caller received all of it]`,
  });
  return kept;
}

/**
 * An image up to this many bytes, of a type a browser shows, is kept whole in the log (its base64 a third more),
 * so a trace can show it as a thumbnail: an icon, a chart, a small screenshot. Larger ones are kept as their
 * size and digest: a page of calls carries every record, and one screenshot would fill it.
 */
export const LOGGED_IMAGE_MAX_BYTES = 16 * 1024;
const SHOWN_IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;

/** Text is kept (redacted); an image as its type, size and digest, and its bytes too when small (LOGGED_IMAGE_MAX_BYTES). */
function loggable(block: ContentBlock, secrets: readonly string[]): unknown {
  if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: redactText(block.text, secrets) };
  if (block.type === 'image' && typeof block.data === 'string') {
    const bytes = Buffer.from(block.data, 'base64');
    const kept = { type: 'image', mimeType: block.mimeType, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    const small = bytes.length <= LOGGED_IMAGE_MAX_BYTES && typeof block.mimeType === 'string' && SHOWN_IMAGE_TYPES.test(block.mimeType);
    return small ? { ...kept, data: bytes.toString('base64') } : kept;
  }
  return redactArguments(block, secrets);
}

function isText(block: unknown): block is { type: 'text'; text: string } {
  return (block as { type?: unknown }).type === 'text' && typeof (block as { text?: unknown }).text === 'string';
}

/**
 * The start of a text block whose JSON fits in `room` bytes (escapes count: a quote or a control character
 * takes more than its own byte), marked `truncated`; null when not even a start fits.
 */
function cutText(text: string, room: number): { type: 'text'; text: string; truncated: true } | null {
  // What the JSON string, quotes included, may take once the rest of the block is counted.
  const limit = room - jsonBytes({ type: 'text', text: '', truncated: true }) + 2;
  let cut = cutToBytes(text, limit - 2);
  for (let size = jsonBytes(cut); size > limit && cut.length > 0; size = jsonBytes(cut)) {
    const raw = Buffer.byteLength(cut);
    // Shrunk in proportion to the escapes it holds, and by at least a byte each time.
    cut = cutToBytes(cut, Math.min(raw - 1, Math.floor((raw * limit) / size)));
  }
  return cut.length > 0 ? { type: 'text', text: cut, truncated: true } : null;
}
