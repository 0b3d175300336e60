/**
 * Random bytes taken from a pool that one `randomFillSync` fills 4 KiB at a time. Each call to the system's
 * generator costs microseconds whatever its size (profiled: an id's 6 bytes cost ~4 µs; a run's clock keys
 * ~16 µs of a worker's time per call); the bytes are the same CSPRNG's. Bytes handed out are zeroed in the pool,
 * so no two takers ever see the same ones. One pool per thread (module state is per thread in Node).
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let taken = POOL_BYTES;

/** `count` fresh random bytes (at most the pool's size), in a new array. */
export function takeRandomBytes(count: number): Uint8Array {
  if (!Number.isInteger(count) || count < 0 || count > POOL_BYTES) throw new RangeError(`takeRandomBytes takes 0 to ${POOL_BYTES} bytes, not ${count}`);
  if (taken + count > POOL_BYTES) {
    randomFillSync(pool);
    taken = 0;
  }
  const bytes = pool.slice(taken, taken + count);
  pool.fill(0, taken, taken + count);
  taken += count;
  return bytes;
}
