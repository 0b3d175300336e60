/**
 * A guest's stdout is a stream: a chunk may hold part of a line or several lines. This turns chunks into
 * complete lines (without their `\n`), decoding UTF-8 only once a line is whole.
 */
export class LineSplitter {
  private pending: Buffer[] = [];

  /** Feeds a chunk; calls `onLine` for each completed line, in order. */
  push(chunk: Uint8Array, onLine: (line: string) => void): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const piece = Buffer.from(chunk.buffer, chunk.byteOffset + start, nl - start);
      if (this.pending.length > 0) {
        this.pending.push(piece);
        onLine(Buffer.concat(this.pending).toString('utf8'));
        this.pending = [];
      } else {
        onLine(piece.toString('utf8'));
      }
      start = nl + 1;
    }
    if (start < chunk.length) this.pending.push(Buffer.from(chunk.subarray(start)));
  }

  /** What is left after the stream ended without a final newline (empty when nothing is). */
  rest(): string {
    const text = Buffer.concat(this.pending).toString('utf8');
    this.pending = [];
    return text;
  }
}
