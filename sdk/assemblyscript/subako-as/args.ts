/**
 * Typed access to a call's `arguments`. Subako does not check arguments against the schema, so each getter
 * checks presence and type; the first problem is kept, and the call answers it as an `isError` result that
 * names the argument (whatever the handler returned), so the model can correct itself.
 *
 *   const name = args.string("name");
 *   const times = args.optionalInteger("times", 1);
 *   if (!args.ok) return args.error();   // optional: stops before doing work with a bad argument
 */
import { Json } from "./json";
import { Result } from "./result";

export class Args {
  /** The first problem found, or "" while every argument read so far is fine. */
  problem: string = "";

  constructor(public json: Json) {}

  get ok(): bool {
    return this.problem.length == 0;
  }

  /** The problem as the result to answer. */
  error(): Result {
    return Result.error(this.problem.length > 0 ? this.problem : "invalid arguments");
  }

  /** Records a problem of the author's own ("name must not be empty"); the first one wins. */
  fail(message: string): void {
    if (this.problem.length == 0) this.problem = message;
  }

  has(name: string): bool {
    const v = this.json.get(name);
    return v != null && !v.isNull;
  }

  /** The raw value, or null when absent. */
  value(name: string): Json | null {
    return this.json.get(name);
  }

  private required(name: string, wanted: string): Json | null {
    const v = this.json.get(name);
    if (v == null) {
      this.fail('missing required argument "' + name + '" (' + wanted + ")");
      return null;
    }
    return v;
  }

  private wrong(name: string, wanted: string, got: Json): void {
    this.fail('argument "' + name + '" must be ' + wanted + ", not " + got.kindName);
  }

  string(name: string): string {
    const v = this.required(name, "a string");
    if (v == null) return "";
    if (!v.isString) {
      this.wrong(name, "a string", v);
      return "";
    }
    return v.asString();
  }

  optionalString(name: string, fallback: string = ""): string {
    const v = this.json.get(name);
    if (v == null || v.isNull) return fallback;
    if (!v.isString) {
      this.wrong(name, "a string", v);
      return fallback;
    }
    return v.asString();
  }

  number(name: string): f64 {
    const v = this.required(name, "a number");
    if (v == null) return 0;
    if (!v.isNumber) {
      this.wrong(name, "a number", v);
      return 0;
    }
    return v.asNumber();
  }

  optionalNumber(name: string, fallback: f64 = 0): f64 {
    const v = this.json.get(name);
    if (v == null || v.isNull) return fallback;
    if (!v.isNumber) {
      this.wrong(name, "a number", v);
      return fallback;
    }
    return v.asNumber();
  }

  integer(name: string): i64 {
    const v = this.required(name, "an integer");
    if (v == null) return 0;
    if (!v.isInteger) {
      this.fail('argument "' + name + '" must be an integer, not ' + (v.isNumber ? "a fraction or an out-of-range number" : v.kindName));
      return 0;
    }
    return v.asInteger();
  }

  optionalInteger(name: string, fallback: i64 = 0): i64 {
    const v = this.json.get(name);
    if (v == null || v.isNull) return fallback;
    if (!v.isInteger) {
      this.fail('argument "' + name + '" must be an integer, not ' + (v.isNumber ? "a fraction or an out-of-range number" : v.kindName));
      return fallback;
    }
    return v.asInteger();
  }

  boolean(name: string): bool {
    const v = this.required(name, "a boolean");
    if (v == null) return false;
    if (!v.isBool) {
      this.wrong(name, "a boolean", v);
      return false;
    }
    return v.asBool();
  }

  optionalBoolean(name: string, fallback: bool = false): bool {
    const v = this.json.get(name);
    if (v == null || v.isNull) return fallback;
    if (!v.isBool) {
      this.wrong(name, "a boolean", v);
      return fallback;
    }
    return v.asBool();
  }

  /** An object argument (an empty object when missing or mistyped: the problem is recorded). */
  object(name: string): Json {
    const v = this.required(name, "an object");
    if (v == null) return Json.object();
    if (!v.isObject) {
      this.wrong(name, "an object", v);
      return Json.object();
    }
    return v;
  }

  /** An array argument (an empty array when missing or mistyped: the problem is recorded). */
  array(name: string): Json {
    const v = this.required(name, "an array");
    if (v == null) return Json.array();
    if (!v.isArray) {
      this.wrong(name, "an array", v);
      return Json.array();
    }
    return v;
  }

  /** An array of strings; a non-string item is a problem that names its index. */
  strings(name: string): string[] {
    const list = this.array(name);
    const out = new Array<string>(0);
    for (let i = 0; i < list.length; i++) {
      const item = list.at(i)!;
      if (!item.isString) {
        this.fail('argument "' + name + '[' + i.toString() + ']" must be a string, not ' + item.kindName);
        return [];
      }
      out.push(item.asString());
    }
    return out;
  }
}
