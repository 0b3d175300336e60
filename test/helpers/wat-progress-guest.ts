/**
 * A WAT function package that reports progress: its `work` tool finds the `progressToken` in the request's
 * `_meta` (protocol.ts puts it first there, as `"progressToken":"<token>"`), prints two malformed or foreign
 * progress lines (another call's token; params that are not an object), then progress 1 and 2 of 2 with the
 * token it received, then answers "ok". Without a token in the request it prints only the foreign lines.
 */
import { GUEST_DATA_START, mcpGuest } from './wat-mcp-guest.js';

const NEEDLE = '"progressToken":"';
const HEAD = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"';
const MID = '","progress":';
const TAIL = ',"total":2}}\n';
const FOREIGN = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"someone-else","progress":5}}\n'
  + '{"jsonrpc":"2.0","method":"notifications/progress","params":7}\n';

const at = {
  needle: GUEST_DATA_START,
  head: GUEST_DATA_START + 64,
  mid: GUEST_DATA_START + 256,
  tail: GUEST_DATA_START + 320,
  foreign: GUEST_DATA_START + 384,
  iovec: GUEST_DATA_START + 1024,
  digit: GUEST_DATA_START + 1040,
};
const str = (text: string): string => JSON.stringify(text).replace(/\\n/g, '\\0a');
const len = (text: string): number => Buffer.byteLength(text);

/** `flood`: first print progress 1 this many times (a guest spamming stdout with progress). */
export function progressGuest(flood = 0): Promise<Uint8Array<ArrayBuffer>> {
  return mcpGuest({
    memoryPages: 3,
    fields: `
  (data (i32.const ${at.needle}) ${str(NEEDLE)})
  (data (i32.const ${at.head}) ${str(HEAD)})
  (data (i32.const ${at.mid}) ${str(MID)})
  (data (i32.const ${at.tail}) ${str(TAIL)})
  (data (i32.const ${at.foreign}) ${str(FOREIGN)})
  (global $tokAt (mut i32) (i32.const 0))
  (global $tokLen (mut i32) (i32.const 0))
  (func $raw (param $ptr i32) (param $len i32)
    (i32.store (i32.const ${at.iovec}) (local.get $ptr))
    (i32.store (i32.const ${at.iovec + 4}) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const ${at.iovec}) (i32.const 1) (i32.const ${at.iovec + 8}))))
  (func $findToken
    (local $i i32) (local $j i32)
    (global.set $tokLen (i32.const 0))
    (block $done
      (loop $scan
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const ${len(NEEDLE)})) (global.get $inLen)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $cmp
            (br_if $mismatch (i32.ne (i32.load8_u (i32.add (i32.const 4096) (i32.add (local.get $i) (local.get $j))))
                                     (i32.load8_u (i32.add (i32.const ${at.needle}) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $cmp (i32.lt_u (local.get $j) (i32.const ${len(NEEDLE)}))))
          (global.set $tokAt (i32.add (i32.const 4096) (i32.add (local.get $i) (i32.const ${len(NEEDLE)}))))
          (local.set $j (i32.const 0))
          (block $end
            (loop $quote
              (br_if $end (i32.ge_u (i32.add (i32.sub (global.get $tokAt) (i32.const 4096)) (local.get $j)) (global.get $inLen)))
              (br_if $end (i32.eq (i32.load8_u (i32.add (global.get $tokAt) (local.get $j))) (i32.const 34)))
              (local.set $j (i32.add (local.get $j) (i32.const 1)))
              (br $quote)))
          (global.set $tokLen (local.get $j))
          (return))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan))))
  (func $progress (param $n i32)
    (call $raw (i32.const ${at.head}) (i32.const ${len(HEAD)}))
    (call $raw (global.get $tokAt) (global.get $tokLen))
    (call $raw (i32.const ${at.mid}) (i32.const ${len(MID)}))
    (i32.store8 (i32.const ${at.digit}) (i32.add (i32.const 48) (local.get $n)))
    (call $raw (i32.const ${at.digit}) (i32.const 1))
    (call $raw (i32.const ${at.tail}) (i32.const ${len(TAIL)})))`,
    work: `(local $n i32)
    (call $raw (i32.const ${at.foreign}) (i32.const ${len(FOREIGN)}))
    (call $findToken)
    (block $flooded
      (loop $flood
        (br_if $flooded (i32.ge_u (local.get $n) (i32.const ${flood})))
        (call $progress (i32.const 1))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $flood)))
    (if (global.get $tokLen) (then (call $progress (i32.const 1)) (call $progress (i32.const 2))))
    (call $emitChar (i32.const 111)) (call $emitChar (i32.const 107))`,
  });
}
