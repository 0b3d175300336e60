/**
 * What the model sees of a function's result, block by block, as the ABI page's table says:
 * text as is; images (checked by their bytes, downscaled past 2000 px); a `volume:///` resource link as the
 * image file it points at, read after the module exited; any other link as one line naming it; anything
 * else as a note that it was left out. A crash becomes one text block with the reason and stderr's tail.
 */
import type { CallToolResult, ContentBlock } from '../tool.js';
import { prepareImage } from './image.js';
import { isVolumeUri, readVolumeFile, resolveVolumeFile, type VolumeMounts } from './volume-uri.js';
import type { CrashInfo } from './types.js';

/** A linked image larger than this is not read at all. */
export const MAX_LINKED_FILE_BYTES = 64 * 1024 * 1024;

const text = (value: string): ContentBlock => ({ type: 'text', text: value });

async function imageBlock(bytes: Uint8Array, what: string): Promise<ContentBlock> {
  const image = await prepareImage(bytes);
  if (typeof image === 'string') return text(`[${what} was left out: ${image}]`);
  return { type: 'image', mimeType: image.mimeType, data: image.data.toString('base64') };
}

async function renderBlock(block: ContentBlock, mounts: VolumeMounts | null): Promise<ContentBlock> {
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

/** Renders a completed result. Run after the module exited, so linked files are complete. */
export async function renderForModel(result: CallToolResult, mounts: VolumeMounts | null): Promise<ContentBlock[]> {
  return Promise.all(result.content.map((block) => renderBlock(block, mounts)));
}

export function renderCrash(info: CrashInfo): ContentBlock[] {
  const tail = info.stderr.length > 0 ? `\nThe last of its stderr:\n${info.stderr}` : '\nIt wrote nothing to stderr.';
  return [text(`The function crashed (${info.reason}): ${info.message}.${tail}`)];
}
