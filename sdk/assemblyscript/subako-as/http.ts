/**
 * HTTP through the `subako_http` host module (ABI 1): the request is JSON, the host does it (allowlist,
 * credentials, redirects) and holds the answer, which the guest copies out. `https` only.
 *
 *   const res = http.request({ url: "https://api.example.com/items", headers: http.headers("accept", "application/json") });
 *   if (!res.ok) return Result.error(res.message);
 */
import { Json } from "./json";

// @ts-ignore: decorator
@external("subako_http", "request")
declare function subako_http_request(ptr: usize, len: i32): i32;

// @ts-ignore: decorator
@external("subako_http", "read_response")
declare function subako_http_read_response(ptr: usize, len: i32): i32;

/** The error kinds of `{"error":{"kind", ...}}`, as the ABI page lists them; `None` when the request went through. */
export enum HttpErrorKind {
  None,
  InvalidRequest,
  HostNotAllowed,
  ForbiddenDestination,
  CredentialHeader,
  CredentialUnavailable,
  TooManyRedirects,
  Timeout,
  TooLarge,
  NotText,
  WriteBudget,
  BadPath,
  Connection,
  Abi,
  /** A kind this SDK does not know (a newer host); `errorName` holds it. */
  Unknown,
}

/** The wire names, in the order of HttpErrorKind from InvalidRequest on. */
export const HTTP_ERROR_NAMES: string[] = [
  "invalid_request",
  "host_not_allowed",
  "forbidden_destination",
  "credential_header",
  "credential_unavailable",
  "too_many_redirects",
  "timeout",
  "too_large",
  "not_text",
  "write_budget",
  "bad_path",
  "connection",
  "abi",
];

function kindOf(name: string): HttpErrorKind {
  const i = HTTP_ERROR_NAMES.indexOf(name);
  return i < 0 ? HttpErrorKind.Unknown : <HttpErrorKind>(i + 1);
}

/** A request body: text, JSON, or a file under /volume sent as it is. */
export class HttpBody {
  private constructor(public json: Json) {}
  static text(text: string): HttpBody {
    return new HttpBody(Json.object().setString("type", "text").setString("text", text));
  }
  static json(value: Json): HttpBody {
    return new HttpBody(Json.object().setString("type", "json").set("json", value));
  }
  static file(path: string): HttpBody {
    return new HttpBody(Json.object().setString("type", "file").setString("path", path));
  }
}

/** One request. Every field but `url` has the host's default. */
export class HttpRequest {
  method: string = "GET";
  url: string = "";
  /** Lowercase names to values (see `http.headers`). */
  headers: Json | null = null;
  body: HttpBody | null = null;
  /** Save the body to this path under /volume instead of answering it inline (for large or binary bodies). */
  saveTo: string = "";
  followRedirects: bool = true;
  /** 0: no bound of its own (the call's timeout still applies). */
  timeoutMs: i32 = 0;

  toJson(): Json {
    const out = Json.object().setString("method", this.method).setString("url", this.url);
    const headers = this.headers;
    if (headers != null) out.set("headers", headers);
    const body = this.body;
    if (body != null) out.set("body", body.json);
    if (this.saveTo.length > 0) out.set("output", Json.object().setString("type", "file").setString("path", this.saveTo));
    if (!this.followRedirects) out.setBool("follow_redirects", false);
    if (this.timeoutMs > 0) out.setInteger("timeout_ms", this.timeoutMs);
    return out;
  }
}

/** What came back: the response (`ok`), or an error with its kind. Never both. */
export class HttpResponse {
  /** True when the request went through (whatever its status). */
  ok: bool = false;
  status: i32 = 0;
  /** Response headers, lowercase names to values. */
  headers: Json = Json.object();
  /** The body, when it was answered inline. */
  text: string = "";
  /** Where the body was saved, and its size, when the request asked for `saveTo`. */
  savedTo: string = "";
  savedBytes: i64 = 0;
  error: HttpErrorKind = HttpErrorKind.None;
  /** The error kind as the host named it (empty when ok). */
  errorName: string = "";
  /** The host's message for an error (empty when ok). */
  message: string = "";

  /** A header's value, or "" when absent. */
  header(name: string): string {
    return this.headers.getString(name.toLowerCase());
  }

  /** The inline body parsed as JSON, or null when it is not JSON. */
  json(): Json | null {
    return Json.parse(this.text);
  }

  static failed(kind: HttpErrorKind, name: string, message: string): HttpResponse {
    const r = new HttpResponse();
    r.error = kind;
    r.errorName = name;
    r.message = message;
    return r;
  }
}

export namespace http {
  /** A JSON object of headers from name/value pairs: `http.headers("accept", "application/json")`. */
  export function headers(name: string, value: string, name2: string = "", value2: string = ""): Json {
    const out = Json.object().setString(name.toLowerCase(), value);
    if (name2.length > 0) out.setString(name2.toLowerCase(), value2);
    return out;
  }

  /** Sends one request and waits for the answer. */
  export function request(req: HttpRequest): HttpResponse {
    const sent = String.UTF8.encode(req.toJson().toString());
    const length = subako_http_request(changetype<usize>(sent), sent.byteLength);
    if (length < 0) return HttpResponse.failed(HttpErrorKind.Abi, "abi", "subako_http.request returned " + length.toString());
    const answer = new ArrayBuffer(length);
    const copied = subako_http_read_response(changetype<usize>(answer), length);
    if (copied != 0) return HttpResponse.failed(HttpErrorKind.Abi, "abi", "subako_http.read_response returned " + copied.toString());
    return parseAnswer(String.UTF8.decode(answer));
  }

  /** A GET of `url`. */
  export function get(url: string): HttpResponse {
    const req = new HttpRequest();
    req.url = url;
    return request(req);
  }

  /** Reads the host's answer: `{"ok":{status, headers, body}}` or `{"error":{kind, message}}`. */
  export function parseAnswer(text: string): HttpResponse {
    const answer = Json.parse(text);
    if (answer == null || !answer.isObject) return HttpResponse.failed(HttpErrorKind.Abi, "abi", "the host's answer is not JSON");
    const error = answer.get("error");
    if (error != null) {
      const name = error.getString("kind", "abi");
      return HttpResponse.failed(kindOf(name), name, error.getString("message"));
    }
    const ok = answer.get("ok");
    if (ok == null || !ok.isObject) return HttpResponse.failed(HttpErrorKind.Abi, "abi", "the host's answer has neither ok nor error");
    const r = new HttpResponse();
    r.ok = true;
    r.status = <i32>ok.getNumber("status");
    const h = ok.get("headers");
    if (h != null && h.isObject) r.headers = h;
    const body = ok.get("body");
    if (body != null) {
      if (body.getString("type") == "file") {
        r.savedTo = body.getString("path");
        const bytes = body.get("bytes");
        r.savedBytes = bytes != null ? bytes.asInteger() : 0;
      } else {
        r.text = body.getString("text");
      }
    }
    return r;
  }
}
