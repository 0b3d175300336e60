/**
 * SEP-2243 `Mcp-Param-*` headers, the serving side (2026-07-28 Streamable HTTP, "Schema Extension"): a tool's
 * input schema may mark a property with `x-mcp-header: "Region"`; a client then mirrors that argument into an
 * `Mcp-Param-Region` header so that gateways can route on it without reading the body, and a server MUST
 * refuse (HTTP 400, JSON-RPC -32020 HeaderMismatch) a `tools/call` whose header is missing, disagrees with the
 * body, or is badly encoded — otherwise a proxy routing on the header and the tool reading the body would act
 * on two different values.
 *
 * The SDK checks this only for its `McpServer` and exports none of the pieces (they are internal to
 * @modelcontextprotocol/server 2.x: `scanXMcpHeaderDeclarations`, `validateMcpParamHeaders`), so the rule is
 * written here once, following that code rule for rule — where a declaration may sit, the value conversions,
 * the `=?base64?…?=` sentinel, numeric comparison for integers — so a client built on the SDK and this check
 * agree on every value. The sending side is the SDK client's (see client-api.ts): nothing here encodes.
 * Pure: no I/O.
 */

/** JSON-RPC HeaderMismatch (2026-07-28), answered with HTTP 400. */
export const HEADER_MISMATCH_RPC_CODE = -32020;
export const MCP_PARAM_HEADER_PREFIX = 'Mcp-Param-';
const X_MCP_HEADER = 'x-mcp-header';
/** The first protocol revision that has these headers; later revisions compare greater (dates). */
const FIRST_MODERN_REVISION = '2026-07-28';
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** One argument a tool asks to see mirrored in a header. */
export interface ParamHeaderDeclaration {
  /** Property names from the arguments object down to the argument. */
  path: string[];
  /** The header's name after `Mcp-Param-`. */
  headerName: string;
  type: string | undefined;
}

/** RFC 9110 token: the only header names a declaration may carry. */
const RFC9110_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PERMITTED_TYPES = new Set(['string', 'integer', 'boolean']);
/** Subschemas a declaration may not sit under: only a chain of `properties` is statically reachable. */
const UNREACHABLE_KEYWORDS = [
  'items', 'prefixItems', 'contains', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems',
  'propertyNames', 'patternProperties', 'dependentSchemas', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'then',
  'else', '$defs', 'definitions',
];
const NAME_TO_SUBSCHEMA_KEYWORDS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/**
 * The declarations a server checks for a tool, as the SDK's McpServer does: every `x-mcp-header` on a chain of
 * `properties`; none when the schema's declarations are invalid (a conforming client leaves such a tool out),
 * except that `number`-typed declarations, though not permitted, are still checked.
 */
export function paramHeaderDeclarations(inputSchema: unknown): ParamHeaderDeclaration[] {
  const declarations: ParamHeaderDeclaration[] = [];
  const seen = new Set<string>();
  let numberOnlyFault = false;
  const visit = (node: unknown, path: string[], reachable: boolean): boolean => {
    if (node === null || typeof node !== 'object') return true;
    const schema = node as Record<string, unknown>;
    if (X_MCP_HEADER in schema) {
      if (!reachable || path.length === 0) return false;
      const name = schema[X_MCP_HEADER];
      if (typeof name !== 'string' || !RFC9110_TOKEN.test(name)) return false;
      const type = typeof schema.type === 'string' ? schema.type : undefined;
      if (type === undefined || !PERMITTED_TYPES.has(type)) {
        if (type !== 'number') return false;
        numberOnlyFault = true;
      }
      const lower = name.toLowerCase();
      if (seen.has(lower)) return false;
      seen.add(lower);
      declarations.push({ path, headerName: name, type });
    }
    const properties = schema.properties;
    if (properties !== null && typeof properties === 'object') {
      for (const [key, child] of Object.entries(properties)) if (!visit(child, [...path, key], reachable)) return false;
    }
    for (const keyword of UNREACHABLE_KEYWORDS) {
      const sub = schema[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub) ? sub
        : sub !== null && typeof sub === 'object' && NAME_TO_SUBSCHEMA_KEYWORDS.has(keyword) ? Object.values(sub) : [sub];
      for (const branch of branches) if (!visit(branch, [...path, `<${keyword}>`], false)) return false;
    }
    return true;
  };
  const valid = visit(inputSchema, [], true);
  return valid || numberOnlyFault ? declarations : [];
}

/** What a request must be for the check to apply: a 2026-07-28 (or later) `tools/call`. */
export interface ModernToolCall {
  id: string | number;
  name: string;
  arguments: unknown;
}

/**
 * The body as a 2026-07-28-era `tools/call`, or undefined. The era is the body's own claim (its `_meta`
 * protocol version), as the SDK classifies: 2025-era clients never send these headers and must not be
 * refused for it.
 */
export function modernToolCall(body: unknown): ModernToolCall | undefined {
  if (!isObject(body) || body.method !== 'tools/call') return undefined;
  const id = body.id;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const params = body.params;
  if (!isObject(params) || typeof params.name !== 'string') return undefined;
  const meta = params._meta;
  const version = isObject(meta) ? meta[PROTOCOL_VERSION_META_KEY] : undefined;
  if (typeof version !== 'string' || version < FIRST_MODERN_REVISION) return undefined;
  return { id, name: params.name, arguments: params.arguments };
}

/** A header that disagrees with the body: which one, and why. */
export interface ParamHeaderMismatch {
  header: string;
  message: string;
}

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CANONICAL_DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * The first declaration whose header does not match the arguments, or undefined when all do. An argument that
 * is absent or null asks for no header (one that came anyway is ignored); a value that is not a primitive the
 * header can carry asks for none either (the client omits it rather than sending it malformed).
 */
export function paramHeaderMismatch(
  declarations: readonly ParamHeaderDeclaration[],
  args: unknown,
  header: (name: string) => string | null,
): ParamHeaderMismatch | undefined {
  for (const declaration of declarations) {
    const name = `${MCP_PARAM_HEADER_PREFIX}${declaration.headerName}`;
    const argument = declaration.path.join('.');
    const bodyValue = valueAt(args, declaration.path);
    if (bodyValue === undefined || bodyValue === null) continue;
    const expected = headerText(bodyValue);
    if (expected === undefined) continue;
    const sent = header(name);
    const how = `send ${name} with the argument's value (as =?base64?<UTF-8 in Base64>?= when it is not plain printable ASCII)`;
    if (sent === null) {
      return { header: name, message: `the arguments carry ${argument}=${JSON.stringify(bodyValue)} but the ${name} header is absent; ${how}` };
    }
    const decoded = decodeHeaderValue(sent);
    if (decoded === undefined) {
      return { header: name, message: `the ${name} header carries an invalid Base64 sentinel value (not canonical Base64 of UTF-8); ${how}` };
    }
    const numeric = (declaration.type === 'integer' || declaration.type === 'number') && typeof bodyValue === 'number' && CANONICAL_DECIMAL.test(decoded);
    if (numeric ? Number(decoded) !== bodyValue : decoded !== expected) {
      return { header: name, message: `the ${name} header decodes to ${JSON.stringify(decoded)} but the arguments carry ${argument}=${JSON.stringify(bodyValue)}; ${how}` };
    }
  }
  return undefined;
}

/** An argument as header text: strings as they are, finite numbers in decimal, booleans as true/false. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) return undefined;
    return String(value);
  }
  return undefined;
}

/** A header value as text: the sentinel's payload decoded, else the value itself; undefined when malformed. */
function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX))) return value;
  const payload = value.slice(BASE64_PREFIX.length, value.length - BASE64_SUFFIX.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch (error) {
    if (error instanceof TypeError) return undefined; // not UTF-8
    throw error;
  }
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    // Own properties only: an argument named "constructor" is not Object's.
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The part of a tool's input schema a client needs to send its `Mcp-Param-*` headers — only the declared
 * properties, on their `properties` chains — or undefined when it declares none. What generated bindings
 * carry per tool (the whole schema would bloat them and says nothing more about headers).
 */
export function paramHeaderSchema(inputSchema: unknown): Record<string, unknown> | undefined {
  const declarations = paramHeaderDeclarations(inputSchema);
  if (declarations.length === 0) return undefined;
  type Node = { type: 'object'; properties: Record<string, unknown> };
  // Null-prototype maps: a property named "__proto__" is a property like any other.
  const objectNode = (): Node => ({ type: 'object', properties: Object.create(null) as Record<string, unknown> });
  const root = objectNode();
  for (const { path, headerName, type } of declarations) {
    let node = root;
    for (const key of path.slice(0, -1)) node = (node.properties[key] ??= objectNode()) as Node;
    node.properties[path[path.length - 1]!] = { ...(type !== undefined ? { type } : {}), 'x-mcp-header': headerName };
  }
  return root;
}
