/**
 * A small JSON reader and writer for the protocol's messages (see ../README.md for why not a library).
 * One value class, `Json`, for every kind; objects keep their keys in order. Numbers keep the text they were
 * read from, so a big integer or an exact decimal passes through a guest unchanged.
 */

import { parseDecimal } from "./decimal";

export enum JsonKind {
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

export class Json {
  kind: JsonKind = JsonKind.Null;
  private flag: bool = false;
  private num: f64 = 0;
  /** The number's text as read (or written by `integer`); empty when it came from an f64. */
  private numText: string = "";
  private str: string = "";
  private items: Json[] = [];
  private names: string[] = [];

  // ---- making values

  static null(): Json {
    return new Json();
  }

  static bool(value: bool): Json {
    const v = new Json();
    v.kind = JsonKind.Bool;
    v.flag = value;
    return v;
  }

  static number(value: f64): Json {
    const v = new Json();
    v.kind = JsonKind.Number;
    v.num = value;
    return v;
  }

  static integer(value: i64): Json {
    const v = new Json();
    v.kind = JsonKind.Number;
    v.num = <f64>value;
    v.numText = value.toString();
    return v;
  }

  static string(value: string): Json {
    const v = new Json();
    v.kind = JsonKind.String;
    v.str = value;
    return v;
  }

  static array(): Json {
    const v = new Json();
    v.kind = JsonKind.Array;
    return v;
  }

  static object(): Json {
    const v = new Json();
    v.kind = JsonKind.Object;
    return v;
  }

  /** Parses JSON text; null when it is not JSON (`Json.lastError` says why). */
  static parse(text: string): Json | null {
    const reader = new JsonReader(text);
    const value = reader.value();
    if (value != null && reader.atEnd()) return value;
    lastParseError = reader.error.length > 0 ? reader.error : "unexpected text after the value at " + reader.at.toString();
    return null;
  }

  static get lastError(): string {
    return lastParseError;
  }

  // ---- kinds

  get isNull(): bool {
    return this.kind == JsonKind.Null;
  }
  get isBool(): bool {
    return this.kind == JsonKind.Bool;
  }
  get isNumber(): bool {
    return this.kind == JsonKind.Number;
  }
  get isString(): bool {
    return this.kind == JsonKind.String;
  }
  get isArray(): bool {
    return this.kind == JsonKind.Array;
  }
  get isObject(): bool {
    return this.kind == JsonKind.Object;
  }

  /** The kind's JSON name, for messages: "a string", "an object", … */
  get kindName(): string {
    switch (this.kind) {
      case JsonKind.Null:
        return "null";
      case JsonKind.Bool:
        return "a boolean";
      case JsonKind.Number:
        return "a number";
      case JsonKind.String:
        return "a string";
      case JsonKind.Array:
        return "an array";
      default:
        return "an object";
    }
  }

  // ---- reading values (a wrong kind reads as the zero value: check the kind first)

  asBool(): bool {
    return this.kind == JsonKind.Bool && this.flag;
  }

  asNumber(): f64 {
    return this.kind == JsonKind.Number ? this.num : 0;
  }

  /** True for a number with no fraction that fits an i64 exactly. */
  get isInteger(): bool {
    if (this.kind != JsonKind.Number) return false;
    if (this.numText.length > 0 && isIntegerText(this.numText)) return integerTextFits(this.numText);
    const n = this.num;
    return isFinite(n) && Math.floor(n) == n && Math.abs(n) <= 9007199254740992.0;
  }

  asInteger(): i64 {
    if (this.kind != JsonKind.Number) return 0;
    if (this.numText.length > 0 && isIntegerText(this.numText) && integerTextFits(this.numText)) return I64.parseInt(this.numText, 10);
    return <i64>this.num;
  }

  asString(): string {
    return this.kind == JsonKind.String ? this.str : "";
  }

  /** Number of items of an array, or of keys of an object. */
  get length(): i32 {
    return this.items.length;
  }

  /** Array item `i`, or null when out of range or not an array. */
  at(i: i32): Json | null {
    if (this.kind != JsonKind.Array || i < 0 || i >= this.items.length) return null;
    return this.items[i];
  }

  /** The object's keys, in order. */
  keys(): string[] {
    return this.kind == JsonKind.Object ? this.names.slice(0) : [];
  }

  /** The value of `key` in an object, or null when absent (or not an object). */
  get(key: string): Json | null {
    if (this.kind != JsonKind.Object) return null;
    const i = this.names.lastIndexOf(key);
    return i < 0 ? null : this.items[i];
  }

  has(key: string): bool {
    return this.kind == JsonKind.Object && this.names.includes(key);
  }

  /** A string member, or `fallback` when absent or not a string. */
  getString(key: string, fallback: string = ""): string {
    const v = this.get(key);
    return v != null && v.isString ? v.str : fallback;
  }

  /** A number member, or `fallback` when absent or not a number. */
  getNumber(key: string, fallback: f64 = 0): f64 {
    const v = this.get(key);
    return v != null && v.isNumber ? v.num : fallback;
  }

  getBool(key: string, fallback: bool = false): bool {
    const v = this.get(key);
    return v != null && v.isBool ? v.flag : fallback;
  }

  // ---- building values (each returns this, to chain)

  /** Sets `key` in an object (replacing the value `get` reads: the last, when the text repeated a key). */
  set(key: string, value: Json): Json {
    assert(this.kind == JsonKind.Object, "Json.set on a value that is not an object");
    const i = this.names.lastIndexOf(key);
    if (i >= 0) {
      this.items[i] = value;
    } else {
      this.names.push(key);
      this.items.push(value);
    }
    return this;
  }

  setString(key: string, value: string): Json {
    return this.set(key, Json.string(value));
  }
  setNumber(key: string, value: f64): Json {
    return this.set(key, Json.number(value));
  }
  setInteger(key: string, value: i64): Json {
    return this.set(key, Json.integer(value));
  }
  setBool(key: string, value: bool): Json {
    return this.set(key, Json.bool(value));
  }

  /** Appends to an array. */
  push(value: Json): Json {
    assert(this.kind == JsonKind.Array, "Json.push on a value that is not an array");
    this.items.push(value);
    return this;
  }

  pushString(value: string): Json {
    return this.push(Json.string(value));
  }

  // ---- writing

  /** Compact JSON text. */
  toString(): string {
    const out = new StringBuilder();
    this.write(out);
    return out.toString();
  }

  write(out: StringBuilder): void {
    switch (this.kind) {
      case JsonKind.Null:
        out.add("null");
        break;
      case JsonKind.Bool:
        out.add(this.flag ? "true" : "false");
        break;
      case JsonKind.Number:
        out.add(this.numText.length > 0 ? this.numText : numberText(this.num));
        break;
      case JsonKind.String:
        writeString(out, this.str);
        break;
      case JsonKind.Array: {
        out.add("[");
        for (let i = 0; i < this.items.length; i++) {
          if (i > 0) out.add(",");
          this.items[i].write(out);
        }
        out.add("]");
        break;
      }
      default: {
        out.add("{");
        for (let i = 0; i < this.items.length; i++) {
          if (i > 0) out.add(",");
          writeString(out, this.names[i]);
          out.add(":");
          this.items[i].write(out);
        }
        out.add("}");
      }
    }
  }

  // for the reader
  static fromNumberText(text: string, value: f64): Json {
    const v = Json.number(value);
    v.numText = text;
    return v;
  }
  addMember(key: string, value: Json): void {
    this.names.push(key);
    this.items.push(value);
  }
  addItem(value: Json): void {
    this.items.push(value);
  }
}

let lastParseError = "";

/** Collects pieces of text and joins them once. */
export class StringBuilder {
  private parts: string[] = [];
  add(text: string): void {
    this.parts.push(text);
  }
  toString(): string {
    return this.parts.join("");
  }
}

/** A JSON string literal for `text`: quotes, backslashes, control characters and lone surrogates escaped. */
export function quote(text: string): string {
  const out = new StringBuilder();
  writeString(out, text);
  return out.toString();
}

const HEX = "0123456789abcdef";

function writeString(out: StringBuilder, text: string): void {
  out.add('"');
  let start = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    let escape = "";
    if (c == 0x22) escape = '\\"';
    else if (c == 0x5c) escape = "\\\\";
    else if (c < 0x20) {
      if (c == 0x0a) escape = "\\n";
      else if (c == 0x0d) escape = "\\r";
      else if (c == 0x09) escape = "\\t";
      else if (c == 0x08) escape = "\\b";
      else if (c == 0x0c) escape = "\\f";
      else escape = unicodeEscape(c);
    } else if (c >= 0xd800 && c <= 0xdbff) {
      // A high surrogate is kept only with its low half after it; alone it would not be UTF-8.
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      escape = unicodeEscape(c);
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      escape = unicodeEscape(c);
    }
    if (escape.length > 0) {
      if (i > start) out.add(text.substring(start, i));
      out.add(escape);
      start = i + 1;
    }
  }
  if (start == 0) out.add(text);
  else if (start < n) out.add(text.substring(start));
  out.add('"');
}

function unicodeEscape(c: i32): string {
  return "\\u" + HEX.charAt((c >> 12) & 15) + HEX.charAt((c >> 8) & 15) + HEX.charAt((c >> 4) & 15) + HEX.charAt(c & 15);
}

/** An f64 as JSON: integers without a fraction, non-finite numbers (which JSON lacks) as null. */
function numberText(n: f64): string {
  if (!isFinite(n)) return "null";
  if (Math.floor(n) == n && Math.abs(n) < 1e21) {
    if (Math.abs(n) <= 9007199254740992.0) return (<i64>n).toString();
  }
  return n.toString();
}

function isIntegerText(text: string): bool {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!(c >= 0x30 && c <= 0x39) && !(i == 0 && c == 0x2d)) return false;
  }
  return true;
}

/** Whether a decimal integer's text fits an i64 (–9223372036854775808 … 9223372036854775807). */
function integerTextFits(text: string): bool {
  const negative = text.charCodeAt(0) == 0x2d;
  const digits = negative ? text.substring(1) : text;
  const limit = negative ? "9223372036854775808" : "9223372036854775807";
  if (digits.length != limit.length) return digits.length < limit.length;
  return digits <= limit;
}

/** Recursive descent over UTF-16 code units; nesting is bounded so hostile input cannot exhaust the stack. */
class JsonReader {
  at: i32 = 0;
  error: string = "";
  private depth: i32 = 0;

  constructor(private text: string) {}

  atEnd(): bool {
    this.skipSpace();
    return this.at == this.text.length;
  }

  private fail(message: string): Json | null {
    if (this.error.length == 0) this.error = message + " at " + this.at.toString();
    return null;
  }

  private skipSpace(): void {
    const text = this.text;
    while (this.at < text.length) {
      const c = text.charCodeAt(this.at);
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
      this.at++;
    }
  }

  value(): Json | null {
    this.skipSpace();
    if (this.at >= this.text.length) return this.fail("unexpected end of JSON");
    const c = this.text.charCodeAt(this.at);
    if (c == 0x7b) return this.object();
    if (c == 0x5b) return this.array();
    if (c == 0x22) {
      const s = this.string();
      return s == null ? null : Json.string(s);
    }
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (this.word("true")) return Json.bool(true);
    if (this.word("false")) return Json.bool(false);
    if (this.word("null")) return Json.null();
    return this.fail("unexpected character");
  }

  private word(w: string): bool {
    if (this.text.substr(this.at, w.length) != w) return false;
    this.at += w.length;
    return true;
  }

  private object(): Json | null {
    if (++this.depth > 512) return this.fail("JSON nested too deeply");
    this.at++; // {
    const obj = Json.object();
    this.skipSpace();
    if (this.at < this.text.length && this.text.charCodeAt(this.at) == 0x7d) {
      this.at++;
      this.depth--;
      return obj;
    }
    while (true) {
      this.skipSpace();
      if (this.at >= this.text.length || this.text.charCodeAt(this.at) != 0x22) return this.fail("expected a key");
      const key = this.string();
      if (key == null) return null;
      this.skipSpace();
      if (this.at >= this.text.length || this.text.charCodeAt(this.at) != 0x3a) return this.fail("expected ':'");
      this.at++;
      const v = this.value();
      if (v == null) return null;
      obj.addMember(key, v);
      this.skipSpace();
      if (this.at >= this.text.length) return this.fail("unexpected end of JSON");
      const c = this.text.charCodeAt(this.at++);
      if (c == 0x7d) break;
      if (c != 0x2c) return this.fail("expected ',' or '}'");
    }
    this.depth--;
    return obj;
  }

  private array(): Json | null {
    if (++this.depth > 512) return this.fail("JSON nested too deeply");
    this.at++; // [
    const arr = Json.array();
    this.skipSpace();
    if (this.at < this.text.length && this.text.charCodeAt(this.at) == 0x5d) {
      this.at++;
      this.depth--;
      return arr;
    }
    while (true) {
      const v = this.value();
      if (v == null) return null;
      arr.addItem(v);
      this.skipSpace();
      if (this.at >= this.text.length) return this.fail("unexpected end of JSON");
      const c = this.text.charCodeAt(this.at++);
      if (c == 0x5d) break;
      if (c != 0x2c) return this.fail("expected ',' or ']'");
    }
    this.depth--;
    return arr;
  }

  /** Reads a string literal at `at` (which holds the opening quote); null on an error. */
  private string(): string | null {
    const text = this.text;
    this.at++; // "
    let start = this.at;
    let out: StringBuilder | null = null;
    while (true) {
      if (this.at >= text.length) {
        this.fail("unterminated string");
        return null;
      }
      const c = text.charCodeAt(this.at);
      if (c == 0x22) break;
      if (c < 0x20) {
        this.fail("control character in a string");
        return null;
      }
      if (c != 0x5c) {
        this.at++;
        continue;
      }
      if (out == null) out = new StringBuilder();
      out.add(text.substring(start, this.at));
      this.at++;
      if (this.at >= text.length) {
        this.fail("unterminated string");
        return null;
      }
      const e = text.charCodeAt(this.at++);
      if (e == 0x22) out.add('"');
      else if (e == 0x5c) out.add("\\");
      else if (e == 0x2f) out.add("/");
      else if (e == 0x62) out.add("\b");
      else if (e == 0x66) out.add("\f");
      else if (e == 0x6e) out.add("\n");
      else if (e == 0x72) out.add("\r");
      else if (e == 0x74) out.add("\t");
      else if (e == 0x75) {
        let code = 0;
        for (let k = 0; k < 4; k++) {
          const h = this.at < text.length ? hexValue(text.charCodeAt(this.at)) : -1;
          if (h < 0) {
            this.fail("bad \\u escape");
            return null;
          }
          code = (code << 4) | h;
          this.at++;
        }
        // Surrogate halves are code units in AssemblyScript's UTF-16 strings: a pair joins by itself.
        out.add(String.fromCharCode(code));
      } else {
        this.fail("bad escape");
        return null;
      }
      start = this.at;
    }
    const end = this.at;
    this.at++; // "
    if (out == null) return text.substring(start, end);
    out.add(text.substring(start, end));
    return out.toString();
  }

  private number(): Json | null {
    const text = this.text;
    const start = this.at;
    if (text.charCodeAt(this.at) == 0x2d) this.at++;
    if (this.digits() == 0) return this.fail("bad number");
    // JSON forbids leading zeros: "01" is not a number.
    if (text.charCodeAt(start + (text.charCodeAt(start) == 0x2d ? 1 : 0)) == 0x30 && this.at - start > (text.charCodeAt(start) == 0x2d ? 2 : 1)) {
      return this.fail("bad number");
    }
    if (this.at < text.length && text.charCodeAt(this.at) == 0x2e) {
      this.at++;
      if (this.digits() == 0) return this.fail("bad number");
    }
    if (this.at < text.length && (text.charCodeAt(this.at) | 0x20) == 0x65) {
      this.at++;
      if (this.at < text.length && (text.charCodeAt(this.at) == 0x2b || text.charCodeAt(this.at) == 0x2d)) this.at++;
      if (this.digits() == 0) return this.fail("bad number");
    }
    const raw = text.substring(start, this.at);
    return Json.fromNumberText(raw, parseDecimal(raw));
  }

  private digits(): i32 {
    const from = this.at;
    while (this.at < this.text.length) {
      const c = this.text.charCodeAt(this.at);
      if (c < 0x30 || c > 0x39) break;
      this.at++;
    }
    return this.at - from;
  }
}

function hexValue(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}
