/**
 * The package as an MCP server over stdio (ABI 1, stateless revision 2026-07-28): one request per stdin
 * line, one compact JSON answer per stdout line, exit 0 at end of file. It answers `server/discover`,
 * `tools/list` (in pages of 16 tools), `tools/call` and `ping`; a message without an `id` is a
 * notification, and ignored.
 */
import { Json, quote } from "./json";
import { Args } from "./args";
import { Result } from "./result";
import { log, readLine, writeLine } from "./io";

export const PROTOCOL_VERSION = "2026-07-28";
/** Tools per `tools/list` page: Subako follows `nextCursor` for up to 16 pages (64 tools at most). */
export const TOOLS_PER_PAGE: i32 = 16;

export type ToolHandler = (args: Args) => Result;

/** A tool's description as `tools/list` answers it. The schemas are JSON text. */
export class ToolSpec {
  /** 1 to 64 characters: a–z, 0–9, `_`, `-`. */
  name: string = "";
  /** What the tool does, for the model (up to 1,024 characters). */
  description: string = "";
  /** A JSON Schema with `"type": "object"` at the top. */
  inputSchema: string = '{"type":"object"}';
  /** Optional JSON Schema of `structuredContent`. */
  outputSchema: string = "";
  title: string = "";
}

class RegisteredTool {
  constructor(
    public name: string,
    public listed: Json,
    public handler: ToolHandler,
  ) {}
}

const tools: RegisteredTool[] = [];

/**
 * Adds a tool. A schema that is not a JSON object is a mistake in the package: it stops the module
 * with the reason on stderr, which `subako build` shows.
 */
export function tool(spec: ToolSpec, handler: ToolHandler): void {
  const listed = Json.object().setString("name", spec.name);
  if (spec.title.length > 0) listed.setString("title", spec.title);
  if (spec.description.length > 0) listed.setString("description", spec.description);
  listed.set("inputSchema", schema(spec.name, "inputSchema", spec.inputSchema));
  if (spec.outputSchema.length > 0) listed.set("outputSchema", schema(spec.name, "outputSchema", spec.outputSchema));
  tools.push(new RegisteredTool(spec.name, listed, handler));
}

function schema(tool: string, field: string, text: string): Json {
  const parsed = Json.parse(text);
  if (parsed == null || !parsed.isObject) {
    const why = parsed == null ? "is not JSON (" + Json.lastError + ")" : "is not a JSON object";
    log("tool " + quote(tool) + ": " + field + " " + why);
    abort("tool " + tool + ": " + field + " " + why);
  }
  return parsed!;
}

/** Answers requests from stdin until it closes. Call it once, after the `tool(...)` calls. */
export function serve(): void {
  while (true) {
    const line = readLine();
    if (line == null) return;
    const answer = handleLine(line);
    if (answer != null) writeLine(answer);
  }
}

/** The answer line for one request line, or null for a notification or a line that is not a request. */
export function handleLine(line: string): string | null {
  if (line.trim().length == 0) return null;
  const message = Json.parse(line);
  if (message == null || !message.isObject) {
    log("ignored a stdin line that is not a JSON object: " + Json.lastError);
    return null;
  }
  const id = message.get("id");
  if (id == null || id.isNull) return null; // a notification
  const method = message.getString("method");
  const found = message.get("params");
  const params = found != null && found.isObject ? found : Json.object();
  if (method == "tools/call") return answer(id, call(params));
  if (method == "tools/list") {
    const page = list(params);
    if (page == null) return failure(id, -32602, "invalid cursor");
    return answer(id, page);
  }
  if (method == "server/discover") return answer(id, discover());
  if (method == "ping") return answer(id, Json.object());
  return failure(id, -32601, "method not found: " + method);
}

function answer(id: Json, result: Json): string {
  return Json.object().setString("jsonrpc", "2.0").set("id", id).set("result", result).toString();
}

function failure(id: Json, code: i32, message: string): string {
  const error = Json.object().setInteger("code", code).setString("message", message);
  return Json.object().setString("jsonrpc", "2.0").set("id", id).set("error", error).toString();
}

function discover(): Json {
  return Json.object()
    .set("supportedVersions", Json.array().pushString(PROTOCOL_VERSION))
    .set("capabilities", Json.object().set("tools", Json.object()));
}

/** One page of tools; the cursor is the index of the page's first tool. Null for a cursor we never gave. */
function list(params: Json): Json | null {
  let start = 0;
  const cursor = params.get("cursor");
  if (cursor != null && !cursor.isNull) {
    if (!cursor.isString) return null;
    const text = cursor.asString();
    if (text.length == 0 || text.length > 4) return null;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x30 || c > 0x39) return null;
    }
    start = I32.parseInt(text);
    if (start > tools.length) return null;
  }
  const end = min(start + TOOLS_PER_PAGE, tools.length);
  const page = Json.array();
  for (let i = start; i < end; i++) page.push(tools[i].listed);
  const out = Json.object().set("tools", page);
  if (end < tools.length) out.setString("nextCursor", end.toString());
  return out;
}

function call(params: Json): Json {
  const name = params.getString("name");
  let target: RegisteredTool | null = null;
  for (let i = 0; i < tools.length; i++) {
    if (tools[i].name == name) {
      target = tools[i];
      break;
    }
  }
  if (target == null) return Result.error("no tool named " + quote(name) + " in this package").toJson();
  const given = params.get("arguments");
  if (given != null && !given.isNull && !given.isObject) {
    return Result.error("arguments must be an object, not " + given.kindName).toJson();
  }
  const args = new Args(given != null && given.isObject ? given : Json.object());
  const result = target.handler(args);
  // An argument problem wins over whatever the handler made of the zero value it was given.
  return (args.ok ? result : args.error()).toJson();
}
