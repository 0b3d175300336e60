/**
 * Reading a package directory: `subako-package.json`, `module.wasm`, and an optional `assets/`
 * directory. Every problem is reported at once; reading never throws for anything in the directory.
 */
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Problem } from '../errors.js';
import { MODULE_LIMITS } from '../wasm/first-call.js';
import { MANIFEST_FILE, MANIFEST_PROBLEMS, MAX_MANIFEST_BYTES, parseManifest, type PackageManifest } from './manifest.js';

export const MODULE_FILE = 'module.wasm';
export const ASSETS_DIR = 'assets';
/** Everything a package is: what a bundle of it holds, whatever else (sources, build files) lies beside them. */
export const PACKAGE_ENTRIES: readonly string[] = [MANIFEST_FILE, MODULE_FILE, ASSETS_DIR];
/** Larger modules are refused before being read into memory: the module size cap of wasm/module-limits. */
export const MAX_MODULE_BYTES = MODULE_LIMITS.moduleBytes;

export const PACKAGE_PROBLEMS = {
  notFound: 'package.not-found',
  moduleMissing: 'package.module-missing',
  moduleTooLarge: 'package.module-too-large',
  assetsNotDir: 'package.assets-not-dir',
  unreadable: 'package.unreadable',
} as const;

export type PackageDirRead =
  | { ok: true; manifest: PackageManifest; moduleBytes: Uint8Array; assetsDir: string | null }
  | { ok: false; problems: Problem[]; manifest: PackageManifest | null; moduleBytes: Uint8Array | null };

type Kind = 'file' | 'directory' | 'other' | 'missing';

async function kindOf(path: string): Promise<Kind> {
  try {
    const info = await stat(path);
    return info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other';
  } catch (error) {
    if (isMissing(error)) return 'missing';
    throw error;
  }
}

export type FileRead = { ok: true; bytes: Uint8Array } | { ok: false; reason: 'missing' | 'not-file' | 'too-large' | 'unreadable'; detail: string };

/**
 * Reads a whole regular file, refusing one larger than `maxBytes` without reading it (and counting
 * what is actually read, in case the file grows meanwhile).
 */
export async function readFileCapped(path: string, maxBytes: number): Promise<FileRead> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'missing' : 'unreadable', detail: String(code ?? error) };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { ok: false, reason: 'not-file', detail: 'not a regular file' };
    if (info.size > maxBytes) return { ok: false, reason: 'too-large', detail: `${info.size} bytes` };
    // One byte more than expected: filling it means the file grew while being read.
    const buffer = Buffer.alloc(info.size + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) return { ok: false, reason: 'unreadable', detail: 'the file changed while being read' };
    }
    return { ok: true, bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, length).slice() };
  } catch (error) {
    return { ok: false, reason: 'unreadable', detail: error instanceof Error ? error.message : String(error) };
  } finally {
    // A read-only handle: a failed close loses nothing, and the read's outcome is already decided.
    await handle.close().catch(() => undefined);
  }
}

async function readManifest(dir: string, problems: Problem[]): Promise<PackageManifest | null> {
  const read = await readFileCapped(join(dir, MANIFEST_FILE), MAX_MANIFEST_BYTES);
  if (!read.ok) {
    const message = read.reason === 'too-large'
      ? `${MANIFEST_FILE} is larger than ${MAX_MANIFEST_BYTES} bytes; a manifest holds only "abi", "name", "description" and "version".`
      : read.reason === 'missing' || read.reason === 'not-file'
        ? `The package directory has no ${MANIFEST_FILE} file; add one like {"abi": 1, "name": "my-tool", "description": "What it does"}.`
        : `${MANIFEST_FILE} cannot be read (${read.detail}).`;
    problems.push({ code: read.reason === 'too-large' ? MANIFEST_PROBLEMS.json : MANIFEST_PROBLEMS.missing, message });
    return null;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
  } catch (error) {
    // A fatal TextDecoder throws TypeError on bytes that are not UTF-8; nothing else is expected here.
    if (!(error instanceof TypeError)) throw error;
    problems.push({ code: MANIFEST_PROBLEMS.json, message: `${MANIFEST_FILE} is not UTF-8 text; write it as UTF-8 JSON.` });
    return null;
  }
  const parsed = parseManifest(text);
  problems.push(...parsed.problems);
  return parsed.manifest;
}

async function readModule(dir: string, problems: Problem[]): Promise<Uint8Array | null> {
  const read = await readFileCapped(join(dir, MODULE_FILE), MAX_MODULE_BYTES);
  if (read.ok) return read.bytes;
  if (read.reason === 'too-large') {
    problems.push({ code: PACKAGE_PROBLEMS.moduleTooLarge, message: `${MODULE_FILE} is ${read.detail}; the largest module accepted is ${MAX_MODULE_BYTES} bytes.` });
  } else if (read.reason === 'unreadable') {
    problems.push({ code: PACKAGE_PROBLEMS.unreadable, message: `${MODULE_FILE} cannot be read (${read.detail}).` });
  } else {
    problems.push({ code: PACKAGE_PROBLEMS.moduleMissing, message: `The package directory has no ${MODULE_FILE} file; put the built WebAssembly module there under that name.` });
  }
  return null;
}

export async function readPackageDir(dir: string): Promise<PackageDirRead> {
  const problems: Problem[] = [];
  if ((await kindOf(dir)) !== 'directory') {
    problems.push({ code: PACKAGE_PROBLEMS.notFound, message: `${dir} is not a directory.` });
    return { ok: false, problems, manifest: null, moduleBytes: null };
  }
  const manifest = await readManifest(dir, problems);
  const moduleBytes = await readModule(dir, problems);
  const assetsPath = join(dir, ASSETS_DIR);
  const assetsKind = await kindOf(assetsPath);
  if (assetsKind !== 'missing' && assetsKind !== 'directory') {
    problems.push({ code: PACKAGE_PROBLEMS.assetsNotDir, message: `"${ASSETS_DIR}" in the package is not a directory; assets go in a directory named "${ASSETS_DIR}" (mounted read-only at /package), or leave it out.` });
  }
  if (problems.length > 0 || !manifest || !moduleBytes) return { ok: false, problems, manifest, moduleBytes };
  return { ok: true, manifest, moduleBytes, assetsDir: assetsKind === 'directory' ? assetsPath : null };
}

/** A path that is not there (or runs through a file): the one failure of a look-up that means "absent". */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
