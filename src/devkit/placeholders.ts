/**
 * The placeholders of template files (`{{name}}`, `{{description}}`, `{{sdk_dir}}`) and the file names
 * npm would drop from a published package (`_gitignore` stands for `.gitignore`). Pure.
 */
import { extname } from 'node:path';

export interface TemplateValues {
  name: string;
  description: string;
  /** Absolute path of the SDK the project builds against. */
  sdk_dir: string;
}

const PLACEHOLDER = /\{\{(name|description|sdk_dir)\}\}/g;

/** Prose where a value goes in as written; everywhere else it lands inside a string literal. */
const PROSE_EXTENSIONS = new Set(['.md', '.txt']);

/**
 * Fills the placeholders of one file. Outside prose a value is escaped as a JSON string's contents, which is
 * also a valid string literal in TOML, C, Rust and TypeScript, so a description with a quote stays one string.
 */
export function fillPlaceholders(text: string, values: TemplateValues, fileName: string): string {
  const prose = PROSE_EXTENSIONS.has(extname(fileName).toLowerCase());
  return text.replace(PLACEHOLDER, (_, key: keyof TemplateValues) => (prose ? values[key] : JSON.stringify(values[key]).slice(1, -1)));
}

/** Template names that npm would leave out of the package, and what they become in the project. */
const DOT_NAMES: Record<string, string> = { _gitignore: '.gitignore', _cargo: '.cargo', _npmrc: '.npmrc' };

/** A template path (POSIX, relative) as the project's path. */
export function projectPath(templatePath: string): string {
  return templatePath.split('/').map((part) => (Object.hasOwn(DOT_NAMES, part) ? DOT_NAMES[part] : part)).join('/');
}
