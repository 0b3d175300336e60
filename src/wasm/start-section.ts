/**
 * Whether a module has a start section: a function WebAssembly runs while it instantiates, before anyone
 * calls an export. The sandbox makes a module's next instance ahead of its run only when it has none, so
 * no guest code ever runs outside a run's limits and host state.
 */
import { HEADER_SIZE } from './header.js';
import { ByteReader } from './reader.js';

const START_SECTION_ID = 8;

/** Reads the section headers only. Throws `DecodeError` on bytes that are not a well-formed module. */
export function hasStartSection(bytes: Uint8Array): boolean {
  const reader = new ByteReader(bytes, HEADER_SIZE);
  while (!reader.atEnd()) {
    const id = reader.u8();
    const size = reader.u32();
    if (id === START_SECTION_ID) return true;
    reader.skip(size);
  }
  return false;
}
