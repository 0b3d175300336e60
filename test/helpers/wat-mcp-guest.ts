/**
 * A function package written in WAT at test time: a minimal ABI 1 guest that answers `server/discover`,
 * `tools/list` (one tool, "work") and `tools/call` line by line, exits 0 at the end of stdin, and runs a
 * test's own `$work` function for each call. `$work` writes the call's text with `$emitNum` and
 * `$emitChar`; the text must stay JSON-safe (digits, letters, spaces, `-`, `=`).
 *
 * It relies on the request lines' fixed shape (src/function/protocol.ts): `{"jsonrpc":"2.0","id":"<id>",
 * "method":"<method>",...`, where an id never holds a comma.
 *
 * Memory: page 0 holds the iovec, the strings and the input line (4096..65535); page 1 the output line.
 * A test's own data goes at 131072 and above (ask for more `memoryPages`).
 */
import { wat } from './wat.js';

export const WORK_TOOL = 'work';
export const GUEST_DATA_START = 131072;

export interface McpGuestParts {
  /** The body of `(func $work ...)`: locals and instructions, leaving nothing on the stack. */
  work: string;
  /** More module fields: tables, globals, element and data segments, helper functions. */
  fields?: string;
  /** Pages of memory, at least 2 (the default). */
  memoryPages?: number;
}

const IN = 4096;
const IN_CAPACITY = 65536 - IN;
const OUT = 65536;

const STRINGS = {
  head: '{"jsonrpc":"2.0","id":',
  result: ',"result":',
  discover: '{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}',
  list: `{"tools":[{"name":"${WORK_TOOL}","description":"Runs the test's work.","inputSchema":{"type":"object"}}]}`,
  callHead: '{"content":[{"type":"text","text":"',
  callTail: '"}]}',
  end: '}\n',
} as const;

type StringName = keyof typeof STRINGS;

/** Each string's offset in memory, laid out from byte 64. */
const LAYOUT = (() => {
  const at = {} as Record<StringName, { offset: number; length: number }>;
  let offset = 64;
  for (const name of Object.keys(STRINGS) as StringName[]) {
    const length = Buffer.byteLength(STRINGS[name]);
    at[name] = { offset, length };
    offset += length;
  }
  if (offset > IN) throw new Error('the guest strings overlap the input buffer');
  return at;
})();

const watString = (text: string): string =>
  `"${[...Buffer.from(text)].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${b.toString(16).padStart(2, '0')}`)).join('')}"`;

const emit = (name: StringName): string => `(call $emit (i32.const ${LAYOUT[name].offset}) (i32.const ${LAYOUT[name].length}))`;

export function mcpGuestWat(parts: McpGuestParts): string {
  const data = (Object.keys(STRINGS) as StringName[])
    .map((name) => `  (data (i32.const ${LAYOUT[name].offset}) ${watString(STRINGS[name])})`).join('\n');
  return `(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") ${Math.max(2, parts.memoryPages ?? 2)})
  (global $inLen (mut i32) (i32.const 0))
  (global $outLen (mut i32) (i32.const 0))
${data}
  (func $emit (param $ptr i32) (param $len i32)
    (memory.copy (i32.add (i32.const ${OUT}) (global.get $outLen)) (local.get $ptr) (local.get $len))
    (global.set $outLen (i32.add (global.get $outLen) (local.get $len))))
  (func $emitChar (param $c i32)
    (i32.store8 (i32.add (i32.const ${OUT}) (global.get $outLen)) (local.get $c))
    (global.set $outLen (i32.add (global.get $outLen) (i32.const 1))))
  ;; A signed decimal: digits are written backwards into bytes 32..47, then copied out.
  (func $emitNum (param $n i32)
    (local $at i32) (local $u i32)
    (local.set $u (local.get $n))
    (if (i32.lt_s (local.get $n) (i32.const 0))
      (then (call $emitChar (i32.const 45)) (local.set $u (i32.sub (i32.const 0) (local.get $n)))))
    (local.set $at (i32.const 48))
    (loop $digit
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.rem_u (local.get $u) (i32.const 10))))
      (local.set $u (i32.div_u (local.get $u) (i32.const 10)))
      (br_if $digit (local.get $u)))
    (call $emit (local.get $at) (i32.sub (i32.const 48) (local.get $at))))
  (func $flush
    (local $at i32)
    (local.set $at (i32.const ${OUT}))
    (block $done
      (loop $write
        (br_if $done (i32.le_s (global.get $outLen) (i32.const 0)))
        (i32.store (i32.const 0) (local.get $at))
        (i32.store (i32.const 4) (global.get $outLen))
        (br_if $done (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
        (local.set $at (i32.add (local.get $at) (i32.load (i32.const 8))))
        (global.set $outLen (i32.sub (global.get $outLen) (i32.load (i32.const 8))))
        (br $write)))
    (global.set $outLen (i32.const 0)))
  ;; The next line's length (without its newline), reading stdin until one is whole; -1 at end of input.
  (func $readLine (result i32)
    (local $i i32) (local $n i32)
    (loop $more
      (local.set $i (i32.const 0))
      (block $notFound
        (loop $scan
          (br_if $notFound (i32.ge_u (local.get $i) (global.get $inLen)))
          (if (i32.eq (i32.load8_u (i32.add (i32.const ${IN}) (local.get $i))) (i32.const 10))
            (then (return (local.get $i))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $scan)))
      (if (i32.ge_u (global.get $inLen) (i32.const ${IN_CAPACITY})) (then (return (i32.const -1))))
      (i32.store (i32.const 0) (i32.add (i32.const ${IN}) (global.get $inLen)))
      (i32.store (i32.const 4) (i32.sub (i32.const ${IN_CAPACITY}) (global.get $inLen)))
      (if (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)) (then (return (i32.const -1))))
      (local.set $n (i32.load (i32.const 8)))
      (if (i32.eqz (local.get $n)) (then (return (i32.const -1))))
      (global.set $inLen (i32.add (global.get $inLen) (local.get $n)))
      (br $more))
    (i32.const -1))
  (func $consume (param $len i32)
    (local.set $len (i32.add (local.get $len) (i32.const 1)))
    (memory.copy (i32.const ${IN}) (i32.add (i32.const ${IN}) (local.get $len)) (i32.sub (global.get $inLen) (local.get $len)))
    (global.set $inLen (i32.sub (global.get $inLen) (local.get $len))))
  (func $work
    ${parts.work})
  (func (export "_start")
    (local $len i32) (local $comma i32)
    (loop $lines
      (local.set $len (call $readLine))
      (if (i32.lt_s (local.get $len) (i32.const 0)) (then (return)))
      (local.set $comma (i32.const 22))
      (block $found
        (loop $find
          (br_if $found (i32.ge_u (local.get $comma) (local.get $len)))
          (br_if $found (i32.eq (i32.load8_u (i32.add (i32.const ${IN}) (local.get $comma))) (i32.const 44)))
          (local.set $comma (i32.add (local.get $comma) (i32.const 1)))
          (br $find)))
      ${emit('head')}
      (call $emit (i32.const ${IN + 22}) (i32.sub (local.get $comma) (i32.const 22)))
      ${emit('result')}
      ;; The method starts 11 bytes after the comma (,"method":"): "s"erver/discover, "tools/l"ist or "tools/c"all.
      (if (i32.eq (i32.load8_u (i32.add (i32.const ${IN + 11}) (local.get $comma))) (i32.const 115))
        (then ${emit('discover')})
        (else
          (if (i32.eq (i32.load8_u (i32.add (i32.const ${IN + 17}) (local.get $comma))) (i32.const 108))
            (then ${emit('list')})
            (else ${emit('callHead')} (call $work) ${emit('callTail')}))))
      ${emit('end')}
      (call $flush)
      (call $consume (local.get $len))
      (br $lines)))
${parts.fields ?? ''})`;
}

export function mcpGuest(parts: McpGuestParts): Promise<Uint8Array<ArrayBuffer>> {
  return wat(mcpGuestWat(parts), 'mcp-guest.wat');
}
