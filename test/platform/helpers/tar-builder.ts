/**
 * Builds tar archives byte by byte (ustar headers), so tests can make the archives no honest packer would:
 * entries climbing out with "..", absolute paths, links, devices.
 */
import { gzipSync } from 'node:zlib';

export interface EntryOptions {
  /** The typeflag: '0' file, '1' hard link, '2' symlink, '3' char device, '5' directory, '6' FIFO. */
  type?: string;
  linkname?: string;
  mode?: number;
}

function field(header: Buffer, offset: number, length: number, text: string): void {
  header.write(text, offset, Math.min(length, Buffer.byteLength(text)), 'utf8');
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

export function tarEntry(path: string, data: string | Buffer, options: EntryOptions = {}): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data) : data;
  const type = options.type ?? '0';
  const size = type === '0' ? body.length : 0;
  const header = Buffer.alloc(512);
  field(header, 0, 100, path);
  field(header, 100, 8, octal(options.mode ?? (type === '5' ? 0o755 : 0o644), 8));
  field(header, 108, 8, octal(0, 8));
  field(header, 116, 8, octal(0, 8));
  field(header, 124, 12, octal(size, 12));
  field(header, 136, 12, octal(0, 12));
  header.fill(' ', 148, 156);
  field(header, 156, 1, type);
  field(header, 157, 100, options.linkname ?? '');
  field(header, 257, 6, 'ustar\0');
  field(header, 263, 2, '00');
  let sum = 0;
  for (const byte of header) sum += byte;
  field(header, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  const padding = Buffer.alloc((512 - (size % 512)) % 512);
  return Buffer.concat([header, type === '0' ? body : Buffer.alloc(0), padding]);
}

/** The entries, two zero blocks, gzipped. */
export function tarArchive(entries: Buffer[]): Buffer {
  return gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)]));
}
