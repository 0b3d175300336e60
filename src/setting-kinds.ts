/**
 * What a setting's value may be: each kind checks a value, says in a refusal what it takes ("a whole number
 * from 0 to 65535"), reads the text of a flag or an environment variable, and finishes a good value into what
 * the program uses (a path made absolute, a URL held as a Secret). The settings (settings.ts) are declared with
 * these; config.ts resolves them. Pure; a leaf beside common/ that imports no room.
 *
 * Hand-written rather than zod: the refusals name what a setting takes in the words of these kinds (zod's own
 * messages would be dropped), and importing zod costs every command that reads a call limit from config.ts a
 * fifth of a second.
 */
import { resolve } from 'node:path';
import { Secret } from './common/first-call.js';

/** How a flag takes the value: with an argument, as a switch (`--x`, `--no-x`), or repeated into a list. */
export type FlagShape = 'value' | 'switch' | 'list';

/** A value as a source gives it (`In`), and as the resolved configuration holds it (`Out`). */
export interface SettingKind<In, Out = In> {
  /** What a good value is, in a refusal's words: `… is "eighty"; it takes <takes>`. */
  readonly takes: string;
  readonly accepts: (value: unknown) => value is In;
  /** A flag's or variable's text as a value: digits become a number, so the check sees what was meant. */
  readonly fromText: (text: string) => unknown;
  readonly finish: (value: In) => Out;
  readonly flagShape: FlagShape;
  /** Never shown, in a refusal or anywhere: the value may hold a password. */
  readonly secret?: true;
}

/** Any kind, whatever its values (`any`: a kind's input type is both read and written, so no narrower type holds them all). */
export type AnyKind = SettingKind<any, any>;
/** What the configuration holds of a setting of kind K, and what a source may give. */
export type KindOutput<K> = K extends SettingKind<infer _In, infer Out> ? Out : never;
export type KindInput<K> = K extends SettingKind<infer In, infer _Out> ? In : never;

const same = <T>(value: T): T => value;
const asText = (text: string): unknown => text;

export function wholeNumber(min: number, max: number): SettingKind<number> {
  return {
    takes: `a whole number from ${min} to ${max}`,
    accepts: (v): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max,
    // Anything but digits stays text, so "eighty" and "-1" are refused as given rather than as NaN.
    fromText: (text) => (/^[0-9]+$/.test(text) ? Number(text) : text),
    finish: same,
    flagShape: 'value',
  };
}

export const nonEmptyText: SettingKind<string> = {
  takes: 'a non-empty string',
  accepts: (v): v is string => typeof v === 'string' && v.length > 0,
  fromText: asText,
  finish: same,
  flagShape: 'value',
};

/** A directory, made absolute against the working directory of the command that read it. */
export const directory: SettingKind<string> = { ...nonEmptyText, finish: (v) => resolve(v) };

export const onOff: SettingKind<boolean> = {
  takes: 'true or false',
  accepts: (v): v is boolean => typeof v === 'boolean',
  fromText: (text) => (text === 'true' ? true : text === 'false' ? false : text),
  finish: same,
  flagShape: 'switch',
};

/** A list of strings; a flag gives one item each time it is repeated, a variable its items separated by commas. */
export const textList: SettingKind<string[]> = {
  takes: 'an array of strings',
  accepts: (v): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string'),
  fromText: (text) => text.split(','),
  finish: same,
  flagShape: 'list',
};

export const httpUrl: SettingKind<string> = {
  takes: 'an http(s) URL without query or fragment',
  accepts: (v): v is string => {
    if (typeof v !== 'string' || !URL.canParse(v)) return false;
    const url = new URL(v);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.search && !url.hash;
  },
  fromText: asText,
  finish: same,
  flagShape: 'value',
};

/**
 * A URL that may hold a user and password, held as a Secret from the moment it is read. Only the protocol is
 * checked, and the URL parser's own error is dropped: it carries the input (and so the password).
 */
function secretUrl(protocols: readonly string[], takes: string, host: 'host required' | 'host optional'): SettingKind<string | Secret, Secret> {
  return {
    takes,
    accepts: (v): v is string | Secret => {
      const value = v instanceof Secret ? v.reveal() : v;
      if (typeof value !== 'string' || !URL.canParse(value)) return false;
      const url = new URL(value);
      return protocols.includes(url.protocol) && (host === 'host optional' || url.hostname !== '');
    },
    fromText: asText,
    finish: (v) => Secret.from(v),
    flagShape: 'value',
    secret: true,
  };
}

export const postgresUrl = secretUrl(['postgres:', 'postgresql:'], 'a postgres:// (or postgresql://) URL', 'host optional');
/** A NATS server: `nats://`, or `tls://` for TLS from the first byte. */
export const natsUrl = secretUrl(['nats:', 'tls:'], 'a nats:// (or tls://) URL', 'host required');

/**
 * The rule for a deployment's NATS prefix, which names its subjects and buckets; the one copy, which
 * platform/scale-out's `natsSubjects` applies too.
 */
export const NATS_PREFIX_RULE = '1-64 of A-Z, a-z, 0-9, "_" and "-"';
export const isNatsPrefix = (value: unknown): value is string => typeof value === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(value);

export const natsPrefix: SettingKind<string> = { ...nonEmptyText, takes: NATS_PREFIX_RULE, accepts: isNatsPrefix };

/** One of a few words. */
export function oneOf<const W extends string>(words: readonly W[]): SettingKind<W> {
  return {
    takes: alternativesOf(words.map((w) => JSON.stringify(w))),
    accepts: (v): v is W => typeof v === 'string' && (words as readonly string[]).includes(v),
    fromText: asText,
    finish: same,
    flagShape: 'value',
  };
}

const alternativesOf = (words: string[]): string => (words.length < 3 ? words.join(' or ') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`);

/** OAuth scopes (RFC 6749 §3.3): printable ASCII words without `"` or `\\`, separated by spaces; held as a list. */
export const scopeList: SettingKind<string, string[]> = {
  takes: 'scopes separated by spaces (printable ASCII, no " or \\)',
  accepts: (v): v is string => typeof v === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+( +[\x21\x23-\x5b\x5d-\x7e]+)*$/.test(v.trim()),
  fromText: asText,
  finish: (v) => v.trim().split(/ +/),
  flagShape: 'value',
};

/** A JWT claim's name: letters, digits and `_ - . :`. */
export const claimName: SettingKind<string> = {
  ...nonEmptyText,
  takes: 'a claim name (letters, digits and _ - . :)',
  accepts: (v): v is string => typeof v === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(v),
};
