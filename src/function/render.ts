/**
 * What the model sees of a function's result, block by block, as the ABI page's table says:
 * text as is; images (checked by their bytes, downscaled past 2000 px); a `volume:///` resource link as the
 * image file it points at, read after the module exited; any other link as one line naming it; anything
 * else as a note that it was left out. A crash becomes one text block with the reason and stderr's tail.
 *
 * The guest chooses every block, so rendering is bounded (render-limits.ts): at most 16 images per result,
 * their pixels checked from the header before anything decodes them, one image at a time per result (and two
 * in the whole process), inside the call's deadline. What is refused becomes a note saying why; the text of
 * the result is always shown.
 */
import type { CallToolResult, ContentBlock } from '../tool.js';
import { prepareImage, readImageHeader } from './image.js';
import { isVolumeUri, readVolumeFile, resolveVolumeFile, type VolumeMounts } from './volume-uri.js';
import type { CrashInfo } from './types.js';
import { IMAGES_DECODED_AT_ONCE, MAX_IMAGES_PER_RESULT, MAX_LINKED_FILE_BYTES } from './render-limits.js';
import { ImageBudget } from './render-budget.js';
import { RENDER_STOPPED, RenderDeadline, type RenderOptions } from './render-deadline.js';
import { GATE_STOPPED, WorkGate } from './work-gate.js';

export type { RenderOptions } from './render-deadline.js';

const text = (value: string): ContentBlock => ({ type: 'text', text: value });

/** An image's bytes, taken from its block or its linked file: not yet checked, not decoded. */
interface GatheredImage {
  gathered: 'image';
  bytes: Uint8Array;
  what: string;
}

const isGathered = (value: ContentBlock | GatheredImage): value is GatheredImage => 'gathered' in value;

function imageBlock(bytes: Uint8Array, what: string): GatheredImage {
  return { gathered: 'image', bytes, what };
}

async function renderBlock(block: ContentBlock, mounts: VolumeMounts | null): Promise<ContentBlock | GatheredImage> {
  switch (block.type) {
    case 'text':
      return text(block.text as string);
    case 'image':
      return imageBlock(Buffer.from(block.data as string, 'base64'), 'an image');
    case 'resource_link': {
      const uri = block.uri as string;
      const name = typeof block.name === 'string' ? block.name : uri;
      if (!isVolumeUri(uri)) return text(`[link: ${name} <${uri}>]`);
      const file = mounts ? resolveVolumeFile(uri, mounts) : { ok: false as const, why: 'no volume is mounted' };
      if (!file.ok) return text(`[link ${uri} was left out: ${file.why}]`);
      if (file.size > MAX_LINKED_FILE_BYTES) return text(`[link ${uri} was left out: the file is over ${MAX_LINKED_FILE_BYTES >> 20} MiB]`);
      const bytes = await readVolumeFile(file, MAX_LINKED_FILE_BYTES);
      if (typeof bytes === 'string') return text(`[link ${uri} was left out: ${bytes}]`);
      return imageBlock(bytes, `the file ${file.guestPath}`);
    }
    default:
      return text(`[a "${String(block.type).slice(0, 40)}" block was left out: the model is shown text and images only]`);
  }
}

/** A block that costs an image's work: an inline image, or a link into the volume (read as an image). */
function isImageWork(block: ContentBlock): boolean {
  return block.type === 'image' || (block.type === 'resource_link' && typeof block.uri === 'string' && isVolumeUri(block.uri));
}

/** Image reads and decodes in flight in this process, across every call's rendering. */
const imageGate = new WorkGate(IMAGES_DECODED_AT_ONCE);

/** Checks the header against the budget, then decodes (only when it must shrink) and counts the bytes shown. */
async function showImage(image: GatheredImage, budget: ImageBudget): Promise<ContentBlock> {
  const leftOut = (why: string): ContentBlock => text(`[${image.what} was left out: ${why}]`);
  const header = await readImageHeader(image.bytes);
  if (typeof header === 'string') return leftOut(header);
  const tooManyPixels = budget.spendPixels(header.width, header.height);
  if (tooManyPixels) return leftOut(tooManyPixels);
  const prepared = await prepareImage(image.bytes, header);
  if (typeof prepared === 'string') return leftOut(prepared);
  const tooManyBytes = budget.spendBytes(prepared.data.length);
  if (tooManyBytes) return leftOut(tooManyBytes);
  return { type: 'image', mimeType: prepared.mimeType, data: prepared.data.toString('base64') };
}

/** One image block from start to end; never throws (a file that vanished or cannot be read is a note). */
async function renderImage(block: ContentBlock, mounts: VolumeMounts | null, budget: ImageBudget): Promise<ContentBlock> {
  let gathered: ContentBlock | GatheredImage;
  try {
    gathered = await renderBlock(block, mounts);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException)?.code ?? 'an error';
    return text(`[link ${String(block.uri)} was left out: the file could not be read (${code})]`);
  }
  return isGathered(gathered) ? showImage(gathered, budget) : gathered;
}

/**
 * Images left out for one reason, told in one note at the place of the first of them (a guest can answer
 * thousands of links; the model reads one line for them, with the count).
 */
class LeftOutNotes {
  private readonly notes = new Map<string, { block: ContentBlock; count: number }>();

  add(model: ContentBlock[], why: string): void {
    const note = this.notes.get(why);
    if (note) {
      note.count += 1;
      return;
    }
    const block = text('');
    this.notes.set(why, { block, count: 1 });
    model.push(block);
  }

  finish(): void {
    for (const [why, { block, count }] of this.notes) {
      block.text = `[${count} ${count === 1 ? 'image was' : 'images were'} left out: ${why}]`;
    }
  }
}

/**
 * Renders a completed result. Run after the module exited, so linked files are complete. Images are done one
 * at a time, in order, until the deadline or the call's signal stops them; the rest are noted.
 */
export async function renderForModel(result: CallToolResult, mounts: VolumeMounts | null, options: RenderOptions = {}): Promise<ContentBlock[]> {
  const budget = new ImageBudget();
  const deadline = new RenderDeadline(options);
  const leftOut = new LeftOutNotes();
  const model: ContentBlock[] = [];
  try {
    for (const block of result.content) {
      if (!isImageWork(block)) {
        const rendered = await renderBlock(block, mounts);
        model.push(isGathered(rendered) ? text('[a block was left out]') : rendered);
        continue;
      }
      if (deadline.reason !== null) {
        leftOut.add(model, deadline.reason);
        continue;
      }
      if (!budget.takeImage()) {
        leftOut.add(model, `a result shows at most ${MAX_IMAGES_PER_RESULT} images`);
        continue;
      }
      const shown = await deadline.race(imageGate.run(() => renderImage(block, mounts, budget), deadline.signal));
      if (shown === RENDER_STOPPED || shown === GATE_STOPPED) leftOut.add(model, deadline.reason ?? 'rendering stopped');
      else model.push(shown);
    }
  } finally {
    deadline.dispose();
  }
  leftOut.finish();
  return model;
}

export function renderCrash(info: CrashInfo): ContentBlock[] {
  const tail = info.stderr.length > 0 ? `\nThe last of its stderr:\n${info.stderr}` : '\nIt wrote nothing to stderr.';
  return [text(`The function crashed (${info.reason}): ${info.message}.${tail}`)];
}
