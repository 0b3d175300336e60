/**
 * Hand-encoded module bytes, for what wabt cannot write (GC types, typed function references,
 * try_table, exnref) and for exact malformed inputs.
 */
import { readFile } from 'node:fs/promises';
import { encodeName, encodeU32 } from '../../src/wasm/encode.js';
import { fixture } from '../helpers/paths.js';
import { wat } from '../helpers/wat.js';

export const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
export const I32 = 0x7f;
export const FUNC = 0x60;

export const vec = (items: number[][]): number[] => [...encodeU32(items.length), ...items.flat()];
export const section = (id: number, content: number[]): number[] => [id, ...encodeU32(content.length), ...content];
export const body = (code: number[], locals: number[][] = []): number[] => {
  const inner = [...vec(locals), ...code];
  return [...encodeU32(inner.length), ...inner];
};

export function moduleOf(...sections: number[][]): Uint8Array<ArrayBuffer> {
  return new Uint8Array([...HEADER, ...sections.flat()]);
}

/**
 * A function package around hand-written parts: `types` (type 0 is always `() -> ()`, for `_start`),
 * one memory exported as "memory", and `_start` with the given code (function 0 unless `extraFunctions`).
 */
export function packageWith(parts: { types?: number[][]; start?: number[]; sections?: number[][] }): Uint8Array<ArrayBuffer> {
  const types = [[FUNC, 0, 0], ...(parts.types ?? [])];
  return moduleOf(
    section(1, vec(types)),
    section(3, vec([[0]])),
    section(5, vec([[0x00, 1]])),
    ...(parts.sections ?? []),
    section(7, vec([[...encodeName('_start'), 0x00, 0], [...encodeName('memory'), 0x02, 0]])),
    section(10, vec([body([...(parts.start ?? []), 0x0b])])),
  );
}

/** A WAT fixture from test/fixtures/wat, compiled now. */
export async function watFixture(name: string): Promise<Uint8Array<ArrayBuffer>> {
  return wat(await readFile(fixture('wat', `${name}.wat`), 'utf8'), `${name}.wat`);
}

export async function builtFixture(...parts: string[]): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await readFile(fixture(...parts)));
}
