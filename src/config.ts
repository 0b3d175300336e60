/**
 * The resolved configuration of `subako serve` and `subako worker`, from the settings declared in settings.ts.
 * Flags override environment variables, which override `subako.config.json`, which overrides the defaults.
 * Resolving is pure (`resolveServerConfig` and `resolveWorkerConfig`, both `resolveSettings` over the one
 * table); only `readConfigFile` touches the file system. Every problem in every source is reported at once,
 * each naming where the value came from (the flag, the variable, or the file and key) and what the setting takes.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { systemErrorCode, withoutUndefined } from './common/first-call.js';
import { ValidationError, type Problem } from './errors.js';
import type { SettingKind } from './setting-kinds.js';
import {
  SETTINGS, fileKey, flagName, sectionOf, settingsOf,
  type ConfigOf, type InputOf, type SettingDeclaration, type SettingsCommand, type SettingsMachine, type SettingsSection,
} from './settings.js';

export { DEFAULT_CALL_LIMITS, type CallLimits } from './call-limits.js';

export const CONFIG_FILE = 'subako.config.json';

/** `subako serve`'s settings, resolved. */
export type ServerConfig = ConfigOf<'serve'>;
/** What any one source may say to serve: every key optional, the URLs as read. */
export type ServerConfigInput = InputOf<'serve'>;
/** `subako worker`'s settings, resolved; its volumes root follows its data directory unless set. */
export type WorkerConfig = Omit<ConfigOf<'worker'>, 'volumesDir'> & { volumesDir: string };
export type WorkerConfigInput = InputOf<'worker'>;

/** The sources of one resolution; the flags come with the name each was given by, for the refusals. */
export interface SettingsSources<Defaults = Record<string, unknown>> {
  defaults: Defaults;
  file?: { path: string; input: Record<string, unknown> };
  env?: NodeJS.ProcessEnv;
  flags?: { input: Record<string, unknown>; names: Record<string, string> };
}

/** The file's key of each section's object. */
const SECTION_KEY: Record<Exclude<SettingsSection, 'top'>, string> = { worker: 'worker' };

/**
 * Who checks every key of a section, not only the settings it takes: serve reads the deployment's file and
 * checks all of it (so a typo in the worker object is caught by whichever starts first); a worker checks its
 * own object whole, and of the top level only what it takes (the rest is serve's business).
 */
const CHECKED_WHOLE_BY: Record<SettingsSection, readonly SettingsCommand[]> = { top: ['serve'], worker: ['serve', 'worker'] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The defaults of a command's settings that have one, made for this machine. */
export function defaultsOf(command: SettingsCommand, machine: SettingsMachine, table: readonly SettingDeclaration[] = SETTINGS): Record<string, unknown> {
  const defaults: Record<string, unknown> = {};
  for (const declaration of settingsOf(command, table)) {
    const value = declaration.default;
    if (value !== undefined) defaults[declaration.name] = typeof value === 'function' ? value(machine) : value;
  }
  return defaults;
}

export function defaultServerConfig(home = homedir()): ServerConfig {
  return defaultsOf('serve', { home, cores: availableParallelism() }) as ServerConfig;
}

export function defaultWorkerConfig(home = homedir(), cores = availableParallelism()): Omit<WorkerConfig, 'nats' | 'volumesDir'> {
  return defaultsOf('worker', { home, cores }) as Omit<WorkerConfig, 'nats' | 'volumesDir'>;
}

const byName = (declarations: readonly SettingDeclaration[]): Map<string, SettingDeclaration> =>
  new Map(declarations.map((declaration) => [declaration.name, declaration]));

/** Checks one source's values against the settings `known`, by name; `where` names the source in every problem. */
function checkValues(input: Record<string, unknown>, where: (key: string) => string, known: ReadonlyMap<string, SettingDeclaration>): Problem[] {
  const problems: Problem[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const declaration = known.get(key);
    if (!declaration) {
      problems.push({ code: 'config.unknown', message: `${where(key)} is not a setting; known settings: ${[...known.keys()].join(', ')}` });
      continue;
    }
    if (declaration.kind.accepts(value)) continue;
    const shown = declaration.kind.secret ? 'not valid (its value is not shown)' : JSON.stringify(value);
    problems.push({ code: 'config.value', message: `${where(key)} is ${shown}; it takes ${declaration.kind.takes}` });
  }
  return problems;
}

/** The key that holds a section's object, checked as a setting of the top level whose value is that object. */
function sectionHolder(section: Exclude<SettingsSection, 'top'>, table: readonly SettingDeclaration[]): SettingDeclaration {
  const names = [...new Set(table.filter((declaration) => sectionOf(declaration) === section).map((declaration) => declaration.name))];
  const kind: SettingKind<Record<string, unknown>> = {
    takes: `an object of subako ${section}'s settings (${names.join(', ')})`, accepts: isObject,
    fromText: (text) => text, finish: (value) => value, flagShape: 'value',
  };
  return { name: SECTION_KEY[section], kind, help: {} };
}

/**
 * One section of the file: puts the values of the settings `command` takes into `values`, and gives the
 * problems of the keys it checks (CHECKED_WHOLE_BY). `holders` are the keys that hold other sections' objects.
 */
function readSection(
  command: SettingsCommand, section: SettingsSection, input: Record<string, unknown>, where: (key: string) => string,
  table: readonly SettingDeclaration[], values: Record<string, unknown>, holders: readonly SettingDeclaration[] = [],
): Problem[] {
  const here = (declarations: readonly SettingDeclaration[]): SettingDeclaration[] =>
    declarations.filter((declaration) => sectionOf(declaration) === section);
  const taken = here(settingsOf(command, table));
  for (const declaration of taken) if (input[declaration.name] !== undefined) values[declaration.name] = input[declaration.name];
  if (CHECKED_WHOLE_BY[section].includes(command)) return checkValues(input, where, byName([...here(table), ...holders]));
  const checked = byName([...taken, ...holders]);
  return checkValues(Object.fromEntries(Object.entries(input).filter(([key]) => checked.has(key))), where, checked);
}

/** The file's say to a command, from its top level and each section's object; problems named `"key" in <path>`. */
function readFileSettings(
  command: SettingsCommand, file: { path: string; input: Record<string, unknown> }, table: readonly SettingDeclaration[], problems: Problem[],
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  const sections = Object.keys(SECTION_KEY) as Exclude<SettingsSection, 'top'>[];
  const holders = sections.map((section) => sectionHolder(section, table));
  problems.push(...readSection(command, 'top', file.input, (key) => `"${key}" in ${file.path}`, table, values, holders));
  for (const section of sections) {
    const key = SECTION_KEY[section];
    const object = file.input[key];
    if (isObject(object)) problems.push(...readSection(command, section, object, (name) => `"${key}.${name}" in ${file.path}`, table, values));
  }
  return values;
}

/** "a", "a or b", "a, b, or c". */
const alternatives = (ways: string[]): string => (ways.length < 3 ? ways.join(' or ') : `${ways.slice(0, -1).join(', ')}, or ${ways.at(-1)}`);

/** A setting that is missing: what it is, and the places it may be given (its flag with its argument, its variable, its key). */
function missingProblem(declaration: SettingDeclaration, what: string, path: string): Problem {
  const flag = declaration.flag?.replace(/<([^>]+)>/, (_, argument: string) => argument.toUpperCase());
  const ways = [flag, declaration.env && `$${declaration.env}`, `"${fileKey(declaration)}" in ${path}`].filter((way): way is string => Boolean(way));
  return { code: 'config.missing', message: `${what} is not set; give ${alternatives(ways)}` };
}

/**
 * A command's settings from its sources, later ones winning: the defaults, the file, the environment, the flags.
 * Every problem in every source is reported at once (a ValidationError), each naming its source; a setting the
 * command cannot start without (`requiredBy`) is one of them when no source gives it. `table` is the settings
 * table (tests give one with a setting planted in it).
 */
export function resolveSettings(command: SettingsCommand, sources: SettingsSources<object>, table: readonly SettingDeclaration[] = SETTINGS): Record<string, unknown> {
  const ours = settingsOf(command, table);
  const known = byName(ours);
  const problems: Problem[] = [];
  const fromFile = sources.file ? readFileSettings(command, sources.file, table, problems) : {};
  const fromEnv: Record<string, unknown> = {};
  const envNames: Record<string, string> = {};
  for (const declaration of ours) {
    const raw = declaration.env === undefined ? undefined : sources.env?.[declaration.env];
    // An empty variable is not set, as a shell's `SUBAKO_PORT= subako serve` means.
    if (raw === undefined || raw === '') continue;
    fromEnv[declaration.name] = declaration.kind.fromText(raw);
    envNames[declaration.name] = declaration.env!;
  }
  problems.push(...checkValues(fromEnv, (key) => envNames[key], known));
  const flags = sources.flags;
  if (flags) problems.push(...checkValues(flags.input, (key) => flags.names[key] ?? `--${key}`, known));
  const merged: Record<string, unknown> = { ...sources.defaults, ...withoutUndefined(fromFile), ...withoutUndefined(fromEnv), ...withoutUndefined(flags?.input) };
  for (const declaration of ours) {
    const what = declaration.requiredBy?.[command];
    if (what !== undefined && merged[declaration.name] === undefined) problems.push(missingProblem(declaration, what, sources.file?.path ?? CONFIG_FILE));
  }
  if (problems.length > 0) throw new ValidationError(problems);
  const resolved: Record<string, unknown> = {};
  for (const declaration of ours) {
    const value = merged[declaration.name];
    if (value !== undefined) resolved[declaration.name] = declaration.kind.finish(value as never);
  }
  return resolved;
}

export function resolveServerConfig(sources: SettingsSources<ServerConfig>): ServerConfig {
  return resolveSettings('serve', sources) as ServerConfig;
}

/**
 * `subako worker`'s settings: of the file, the top-level keys it shares with the replicas and its `worker`
 * object (serve's other keys are serve's business); a missing NATS URL is one of the problems, naming the
 * three places it may be given.
 */
export function resolveWorkerConfig(sources: SettingsSources<Omit<WorkerConfig, 'nats' | 'volumesDir'>>): WorkerConfig {
  const config = resolveSettings('worker', sources) as Omit<WorkerConfig, 'volumesDir'> & { volumesDir?: string };
  return { ...config, volumesDir: config.volumesDir ?? join(config.dataDir, 'volumes') };
}

/** The ways to set one of a command's settings, for a message that tells how to change it. */
export function waysToSet(command: SettingsCommand, name: string, table: readonly SettingDeclaration[] = SETTINGS): { flag?: string; env?: string; fileKey: string } {
  const declaration = settingsOf(command, table).find((candidate) => candidate.name === name);
  if (!declaration) throw new Error(`subako ${command} has no setting ${JSON.stringify(name)}`);
  return { ...withoutUndefined({ flag: flagName(declaration), env: declaration.env }), fileKey: fileKey(declaration) };
}

/** How to change a setting, in a message: `--port (or SUBAKO_PORT, or "port" in subako.config.json)`. */
export function howToSet(command: SettingsCommand, name: string): string {
  const ways = waysToSet(command, name);
  const others = [ways.env, `"${ways.fileKey}" in ${CONFIG_FILE}`].filter((way): way is string => way !== undefined);
  return ways.flag === undefined ? others.join(', or ') : `${ways.flag} (or ${others.join(', or ')})`;
}

/** Reads `subako.config.json` (or the path given); a missing default file is no error, a missing named one is. */
export function readConfigFile(path: string | undefined, cwd = process.cwd()): { path: string; input: Record<string, unknown> } | undefined {
  const file = resolve(cwd, path ?? CONFIG_FILE);
  let textContent: string;
  try {
    textContent = readFileSync(file, 'utf8');
  } catch (error) {
    // Only the default file's absence is quiet; one that is there but unreadable (EACCES, EISDIR) is refused.
    const code = systemErrorCode(error);
    if (code === undefined) throw error;
    if (path === undefined && code === 'ENOENT') return undefined;
    throw new ValidationError([{ code: 'config.file', message: `the config file ${file} cannot be read (${code})` }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(textContent);
  } catch (err) {
    throw new ValidationError([{ code: 'config.file', message: `${file} is not valid JSON (${(err as Error).message})` }]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError([{ code: 'config.file', message: `${file} must hold a JSON object of settings` }]);
  }
  return { path: file, input: value as Record<string, unknown> };
}

/**
 * OAuth at the door, as the server takes it (server/oauth-door.ts): the external authorization server whose
 * access tokens (JWTs) the MCP endpoints accept, the audience they must be for, where its signing keys are, the
 * scopes a token must carry, the claim that names the platform user, and what to do with a user not known here.
 */
export interface OAuthDoorSettings {
  issuer: string;
  audience: string;
  jwksUrl: string;
  scopes: string[];
  userClaim: string;
  unknownUsers: 'refuse' | 'create';
}

const DOOR_PARTS = ['oauthIssuer', 'oauthAudience', 'oauthJwksUrl'] as const;

/**
 * The door's settings, or undefined when it is off (no issuer, audience or JWKS URL set). Set half-way (an issuer
 * without an audience, say), a ValidationError naming what is missing: a door that checked less than it was told
 * to would let tokens in that it should refuse.
 */
export function oauthDoorOf(settings: Pick<ServerConfig, 'oauthIssuer' | 'oauthAudience' | 'oauthJwksUrl' | 'oauthScope' | 'oauthUserClaim' | 'oauthUnknownUsers'>): OAuthDoorSettings | undefined {
  const given = DOOR_PARTS.filter((name) => settings[name] !== undefined);
  if (given.length === 0) return undefined;
  const missing = DOOR_PARTS.filter((name) => settings[name] === undefined);
  if (missing.length > 0) {
    throw new ValidationError([{
      code: 'config.oauth_door',
      message: `OAuth at the door needs oauthIssuer, oauthAudience and oauthJwksUrl together: ${given.join(' and ')} set, ${missing.join(' and ')} not ` +
        `(${missing.map((name) => howToSet('serve', name)).join('; ')})`,
    }]);
  }
  return {
    issuer: settings.oauthIssuer!, audience: settings.oauthAudience!, jwksUrl: settings.oauthJwksUrl!,
    scopes: settings.oauthScope ?? [], userClaim: settings.oauthUserClaim, unknownUsers: settings.oauthUnknownUsers,
  };
}
