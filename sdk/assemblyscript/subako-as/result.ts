/**
 * What a tool answers: an MCP CallToolResult. Subako shows the model text, images, and images linked from
 * the volume (`resource_link` to `volume:///…`); `structuredContent` goes to clients that read it.
 */
import { Json } from "./json";
import { base64 } from "./base64";
import { files } from "./files";

export class Result {
  content: Json = Json.array();
  structuredContent: Json | null = null;
  isError: bool = false;

  /** A text block. */
  static text(text: string): Result {
    return new Result().addText(text);
  }

  /**
   * Structured content, and the same JSON as a text block for the model (which reads text, not
   * `structuredContent`). A value that is not an object is wrapped as `{"result": value}`.
   */
  static json(value: Json): Result {
    const r = new Result();
    const object = value.isObject ? value : Json.object().set("result", value);
    r.structuredContent = object;
    return r.addText(object.toString());
  }

  /** An inline image (PNG, JPEG, GIF or WebP); it counts against stdout's 1 MiB, so link big ones instead. */
  static image(bytes: Uint8Array, mimeType: string = "image/png"): Result {
    return new Result().addImage(bytes, mimeType);
  }

  /**
   * A link to a file: a path under /volume (`/volume/tmp/chart.png`) becomes its `volume:///` URI, which
   * Subako reads after the call and shows the model when it is an image. Any other URI is linked as given.
   */
  static link(pathOrUri: string, name: string = "", mimeType: string = ""): Result {
    return new Result().addLink(pathOrUri, name, mimeType);
  }

  /** A failure the model should read and act on (`isError`), never a crash. */
  static error(message: string): Result {
    const r = new Result().addText(message);
    r.isError = true;
    return r;
  }

  addText(text: string): Result {
    this.content.push(Json.object().setString("type", "text").setString("text", text));
    return this;
  }

  addImage(bytes: Uint8Array, mimeType: string = "image/png"): Result {
    this.content.push(Json.object().setString("type", "image").setString("mimeType", mimeType).setString("data", base64.encode(bytes)));
    return this;
  }

  addLink(pathOrUri: string, name: string = "", mimeType: string = ""): Result {
    const uri = pathOrUri.startsWith("/") ? files.volumeUri(pathOrUri) : pathOrUri;
    const shown = name.length > 0 ? name : pathOrUri.substring(pathOrUri.lastIndexOf("/") + 1);
    const block = Json.object().setString("type", "resource_link").setString("uri", uri.length > 0 ? uri : pathOrUri).setString("name", shown);
    if (mimeType.length > 0) block.setString("mimeType", mimeType);
    this.content.push(block);
    return this;
  }

  /** Any other content block, as JSON. */
  addBlock(block: Json): Result {
    this.content.push(block);
    return this;
  }

  withStructuredContent(value: Json): Result {
    this.structuredContent = value;
    return this;
  }

  toJson(): Json {
    const out = Json.object().set("content", this.content);
    const structured = this.structuredContent;
    if (structured != null) out.set("structuredContent", structured);
    if (this.isError) out.setBool("isError", true);
    return out;
  }
}
