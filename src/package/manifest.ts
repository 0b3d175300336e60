/**
 * `subako-package.json`: what a package says about itself. Tools are never in the manifest (they are
 * what `tools/list` answers); the manifest names the ABI, the package, and optionally its version.
 */
import type { Problem } from '../errors.js';

export const MANIFEST_FILE = 'subako-package.json';
/** A manifest is a few hundred bytes; anything far larger is not one. */
export const MAX_MANIFEST_BYTES = 64 * 1024;

export interface PackageManifest {
  abi: 1;
  name: string;
  description: string;
  /** Optional, ours to add: semantic version `MAJOR.MINOR.PATCH[-pre][+build]`, at most 64 characters. */
  version?: string;
}

export const MANIFEST_PROBLEMS = {
  missing: 'manifest.missing',
  json: 'manifest.json',
  abi: 'manifest.abi',
  name: 'manifest.name',
  description: 'manifest.description',
  version: 'manifest.version',
  unknownField: 'manifest.unknown-field',
} as const;

export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const MAX_DESCRIPTION_LENGTH = 4096;
export const MAX_VERSION_LENGTH = 64;
const IDENT = '[0-9A-Za-z-]+';
const NUMBER = '(?:0|[1-9][0-9]*)';
export const VERSION_PATTERN = new RegExp(
  `^${NUMBER}\\.${NUMBER}\\.${NUMBER}(?:-${IDENT}(?:\\.${IDENT})*)?(?:\\+${IDENT}(?:\\.${IDENT})*)?$`,
);

/** Every field a manifest may hold; any other is refused so a misspelt field is not silently ignored. */
const KNOWN_FIELDS = ['$schema', 'abi', 'name', 'description', 'version'] as const;

export interface ManifestResult {
  manifest: PackageManifest | null;
  problems: Problem[];
}

const describeValue = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'string' ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) : typeof value === 'object' ? 'an object' : String(value);

/** Parses the manifest file's text and checks it; every problem at once. */
export function parseManifest(text: string): ManifestResult {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { manifest: null, problems: [{ code: MANIFEST_PROBLEMS.json, message: `${MANIFEST_FILE} is not valid JSON (${detail}).` }] };
  }
  return validateManifest(value);
}

export function validateManifest(value: unknown): ManifestResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      manifest: null,
      problems: [{ code: MANIFEST_PROBLEMS.json, message: `${MANIFEST_FILE} must hold a JSON object like {"abi": 1, "name": "my-tool", "description": "…"}; it holds ${describeValue(value)}.` }],
    };
  }
  const fields = value as Record<string, unknown>;
  const problems: Problem[] = [];
  const { abi, name, description, version } = fields;

  if (abi !== 1) {
    problems.push({
      code: MANIFEST_PROBLEMS.abi,
      message: abi === undefined
        ? `${MANIFEST_FILE} has no "abi"; set "abi": 1 (MCP 2026-07-28 over stdio, the only ABI Subako runs).`
        : `${MANIFEST_FILE} has "abi": ${describeValue(abi)}; the only ABI Subako runs is the number 1.`,
    });
  }
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    problems.push({
      code: MANIFEST_PROBLEMS.name,
      message: `${MANIFEST_FILE} ${name === undefined ? 'has no "name"' : `has "name": ${describeValue(name)}`}; a name is 1 to 64 characters of lowercase letters, digits, "_" and "-", starting with a letter or digit (e.g. "weather-lookup").`,
    });
  }
  if (typeof description !== 'string' || description.trim() === '' || description.length > MAX_DESCRIPTION_LENGTH) {
    problems.push({
      code: MANIFEST_PROBLEMS.description,
      message: `${MANIFEST_FILE} ${description === undefined ? 'has no "description"' : `has "description": ${typeof description === 'string' ? (description.trim() === '' ? 'an empty string' : `a string of ${description.length} characters`) : describeValue(description)}`}; it must be a non-empty string of at most ${MAX_DESCRIPTION_LENGTH} characters saying what the package does.`,
    });
  }
  if (version !== undefined && (typeof version !== 'string' || version.length > MAX_VERSION_LENGTH || !VERSION_PATTERN.test(version))) {
    problems.push({
      code: MANIFEST_PROBLEMS.version,
      message: `${MANIFEST_FILE} has "version": ${describeValue(version)}; a version is a semantic version string such as "1.2.0" or "0.3.1-beta.2" (MAJOR.MINOR.PATCH, at most ${MAX_VERSION_LENGTH} characters), or is left out.`,
    });
  }
  for (const key of Object.keys(fields)) {
    if ((KNOWN_FIELDS as readonly string[]).includes(key)) continue;
    const hint = key === 'tools'
      ? ' Tools are not declared in the manifest: they are what the module answers to tools/list.'
      : '';
    problems.push({
      code: MANIFEST_PROBLEMS.unknownField,
      message: `${MANIFEST_FILE} has the field ${JSON.stringify(key)}, which Subako does not know; the fields are ${KNOWN_FIELDS.filter((f) => f !== '$schema').map((f) => `"${f}"`).join(', ')}.${hint}`,
    });
  }
  if (problems.length > 0) return { manifest: null, problems };
  const manifest: PackageManifest = { abi: 1, name: name as string, description: description as string };
  if (version !== undefined) manifest.version = version as string;
  return { manifest, problems };
}
