/**
 * subako-as: write a Subako function package (ABI 1) in AssemblyScript.
 *
 *   import { tool, serve, Result, Json, Args } from "subako-as";
 *   tool({ name: "greet", description: "Greets someone.", inputSchema: `{"type":"object",...}` }, (args: Args): Result => {
 *     const name = args.string("name");
 *     return Result.json(Json.object().setString("message", "Hello, " + name + "!"));
 *   });
 *   serve();
 */
export { Json, JsonKind, StringBuilder, quote } from "./json";
export { Args } from "./args";
export { Result } from "./result";
export { tool, serve, handleLine, ToolSpec, ToolHandler, PROTOCOL_VERSION, TOOLS_PER_PAGE } from "./server";
export { log } from "./io";
export { http, HttpRequest, HttpResponse, HttpBody, HttpErrorKind, HTTP_ERROR_NAMES } from "./http";
export { files, FileStatus, FileData } from "./files";
export { base64 } from "./base64";
