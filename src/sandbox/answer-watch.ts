/**
 * Watches a guest's stdout, inside the worker, for the line that ends a line-delimited JSON conversation:
 * a complete line holding a JSON object whose `id` is the one asked for. The worker then gives the guest end
 * of file on stdin at once, as its caller would after reading that line — without the round trip to the
 * caller and back, which on a call's path costs two wakes (and across a process, two IPC crossings).
 * It knows no protocol beyond "one JSON value per line, answers carry the request's id".
 */
export class AnswerWatch {
  private partial: Uint8Array[] = [];
  private found = false;

  constructor(private readonly id: string | number) {}

  /** Takes the next stdout bytes; true once the answer line has been seen (and from then on). */
  push(bytes: Uint8Array): boolean {
    if (this.found) return true;
    let start = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 0x0a) continue;
      const line = this.partial.length === 0 ? bytes.subarray(start, i) : Buffer.concat([...this.partial, bytes.subarray(start, i)]);
      this.partial = [];
      start = i + 1;
      if (this.isAnswer(line)) return (this.found = true);
    }
    if (start < bytes.length) this.partial.push(bytes.slice(start));
    return false;
  }

  private isAnswer(line: Uint8Array): boolean {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString('utf8'));
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
      return false; // not JSON: the caller judges it; stdin stays open until it does
    }
    return typeof value === 'object' && value !== null && (value as { id?: unknown }).id === this.id;
  }
}
