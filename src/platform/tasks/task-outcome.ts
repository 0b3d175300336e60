/**
 * What a task keeps of how its call ended, sealed in the store (AES-256-GCM with the platform key, bound to the
 * session and the task as authenticated data, so a row copied to another task or session does not open): the
 * result, or the JSON-RPC error. A result past MAX_TASK_RESULT_BYTES of JSON is kept as the call log keeps one
 * (call-preview.ts): the blocks that fit, the start of the text block that did not, and a last block saying how
 * much was left out; its structured content goes when it does not fit.
 */
import { jsonBytes, seal, unseal } from '../../common/index.js';
import type { CallToolResult } from '../../tool.js';
import type { TaskError } from '../../mcp/index.js';

/** The most of a result's JSON a task keeps: a page of text, a few images. */
export const MAX_TASK_RESULT_BYTES = 4 * 1024 * 1024;
/** Room kept for the block that says what was left out. */
const NOTE_ROOM = 512;

export type TaskOutcome = { result: CallToolResult } | { error: TaskError };

export function sealOutcome(outcome: TaskOutcome, key: Buffer, sessionId: string, taskId: string): string {
  return seal(JSON.stringify(outcome), { key, context: outcomeContext(sessionId, taskId) });
}

export function openOutcome(sealed: string, key: Buffer, sessionId: string, taskId: string): TaskOutcome {
  return JSON.parse(unseal(sealed, { key, context: outcomeContext(sessionId, taskId) }).reveal()) as TaskOutcome;
}

function outcomeContext(sessionId: string, taskId: string): string {
  return `subako.task.v1:${sessionId}:${taskId}`;
}

/** The result as a task keeps it: whole when it fits in `maxBytes` of JSON, else cut as the call log cuts one. */
export function boundedResult(result: CallToolResult, maxBytes = MAX_TASK_RESULT_BYTES): CallToolResult {
  const total = jsonBytes(result);
  if (total <= maxBytes) return result;
  const budget = maxBytes - NOTE_ROOM;
  const kept: CallToolResult = { content: [], ...(result.isError ? { isError: true } : {}) };
  let used = jsonBytes(kept);
  if (result.structuredContent !== undefined && used + jsonBytes(result.structuredContent) < budget / 2) {
    kept.structuredContent = result.structuredContent;
    used = jsonBytes(kept);
  }
  for (const block of result.content) {
    const size = jsonBytes(block) + 1;
    if (used + size <= budget) {
      kept.content.push(block);
      used += size;
      continue;
    }
    if (block.type === 'text' && typeof block.text === 'string') {
      const room = budget - used - jsonBytes({ type: 'text', text: '', truncated: true }) - 1;
      const cut = cutJsonString(block.text, room);
      if (cut.length > 0) kept.content.push({ type: 'text', text: cut, truncated: true });
    }
    break;
  }
  kept.content.push({
    type: 'text', truncated: true,
    text: `[${total - jsonBytes(kept)} of the ${total} bytes of this result were left out: a task keeps ${maxBytes / 1024 / 1024} MiB of a result]`,
  });
  return kept;
}

/** The longest start of `text` whose JSON string takes at most `room` bytes. */
function cutJsonString(text: string, room: number): string {
  if (room <= 2) return '';
  let low = 0;
  let high = Math.min(text.length, room);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (jsonBytes(text.slice(0, mid)) <= room) low = mid;
    else high = mid - 1;
  }
  let cut = text.slice(0, low);
  // Never half a surrogate pair.
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return cut;
}
