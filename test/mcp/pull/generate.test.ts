import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describePullCommand, shellQuote } from '../../../src/mcp/pull/command-line.js';
import { generateBindings, type ToolListing } from '../../../src/mcp/pull/generate.js';
import { NameSpace, toIdentifier, toTypeStem } from '../../../src/mcp/pull/identifiers.js';
import { SchemaMapper } from '../../../src/mcp/pull/schema-to-ts.js';
import { docComment, stringLiteral } from '../../../src/mcp/pull/ts-text.js';

/** The type text of a schema, as the right-hand side of an alias named `Root`. */
function typeOf(schema: unknown, root: unknown = schema): string {
  return new SchemaMapper(root, 'Root', (segment) => `Def${toTypeStem(segment)}`).typeOf(schema);
}

const tool = (name: string, extra: Partial<ToolListing> = {}): ToolListing => ({ name, inputSchema: { type: 'object' }, ...extra });

describe('identifiers: tool names become safe, unique TypeScript names', () => {
  test('punctuation, leading digits, reserved words and __proto__ are made safe', () => {
    assert.equal(toIdentifier('get-user'), 'get_user');
    assert.equal(toIdentifier('files.read'), 'files_read');
    assert.equal(toIdentifier('1st'), '_1st');
    assert.equal(toIdentifier('class'), 'class_');
    assert.equal(toIdentifier('await'), 'await_');
    assert.equal(toIdentifier('__proto__'), '__proto___');
    assert.equal(toIdentifier(''), '_');
    assert.equal(toIdentifier('名前'), '__');
    assert.equal(toIdentifier('$ok_1'), '$ok_1');
  });

  test('type stems are PascalCase and never start with a digit', () => {
    assert.equal(toTypeStem('get-user'), 'GetUser');
    assert.equal(toTypeStem('list_files'), 'ListFiles');
    assert.equal(toTypeStem('getUser'), 'GetUser');
    assert.equal(toTypeStem('1st'), 'T1st');
    assert.equal(toTypeStem('---'), 'Tool');
  });

  test('a namespace hands out each name once, numbering repeats, and never a reserved one', () => {
    const names = new NameSpace(['Tools']);
    assert.equal(names.claim('get_user'), 'get_user');
    assert.equal(names.claim('get_user'), 'get_user_2');
    assert.equal(names.claim('get_user'), 'get_user_3');
    assert.equal(names.claim('Tools', ''), 'Tools2');
    assert.equal(names.claimStem('GetUser', ['Input', 'Output']), 'GetUser');
    assert.equal(names.claimStem('GetUser', ['Input']), 'GetUser2');
  });
});

describe('JSON Schema → TypeScript: precise where the schema maps, never narrower than the schema', () => {
  const cases: Array<[string, unknown, string]> = [
    ['primitive types', { type: 'string' }, 'string'],
    ['integer is a number', { type: 'integer' }, 'number'],
    ['boolean', { type: 'boolean' }, 'boolean'],
    ['null', { type: 'null' }, 'null'],
    ['a type list is a union, "null" included (nullable)', { type: ['string', 'null'] }, 'string | null'],
    ['OpenAPI nullable adds null', { type: 'number', nullable: true }, 'number | null'],
    ['const is a literal', { const: 'fixed' }, '"fixed"'],
    ['a non-primitive const is JSON', { const: { a: 1 } }, 'JsonValue'],
    ['enum is a union of literals', { enum: ['a', 'b', 3, true, null] }, '"a" | "b" | 3 | true | null'],
    ['enum values outside the type are dropped', { type: 'string', enum: ['a', 1] }, '"a"'],
    ['integer enum keeps only integers', { type: 'integer', enum: [1, 1.5] }, '1'],
    ['an empty enum admits nothing', { enum: [] }, 'never'],
    ['an enum with an object is JSON', { enum: ['a', { b: 1 }] }, 'JsonValue'],
    ['true and {} are any JSON', {}, 'JsonValue'],
    ['false admits nothing', false, 'never'],
    ['an unknown type name is JSON', { type: 'date' }, 'JsonValue'],
    ['no type: properties alone do not make it an object', { properties: { a: { type: 'string' } } }, 'JsonValue'],
    ['array of items', { type: 'array', items: { type: 'string' } }, 'string[]'],
    ['array without items', { type: 'array' }, 'JsonValue[]'],
    ['array of a union is parenthesized', { type: 'array', items: { type: ['string', 'number'] } }, '(string | number)[]'],
    ['tuple with minItems, closed', { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 1, items: false }, '[string, number?]'],
    ['tuple open to more items', { type: 'array', prefixItems: [{ type: 'string' }] }, '[string?, ...JsonValue[]]'],
    ['tuple with typed rest', { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'number' }, minItems: 1 }, '[string, ...number[]]'],
    ['draft-07 tuple form', { type: 'array', items: [{ type: 'boolean' }], additionalItems: false, minItems: 1 }, '[boolean]'],
    ['anyOf is a union', { anyOf: [{ type: 'string' }, { type: 'number' }] }, 'string | number'],
    ['oneOf is a union', { oneOf: [{ const: 'a' }, { const: 'b' }] }, '"a" | "b"'],
    ['a union with an unmappable branch is JSON', { anyOf: [{ type: 'string' }, {}] }, 'JsonValue'],
    ['allOf is an intersection; unmappable parts drop out', { allOf: [{ type: 'string' }, { minLength: 2 }] }, 'string'],
    ['type with anyOf constraints keeps the type', { type: 'string', anyOf: [{ format: 'email' }, { format: 'uri' }] }, 'string'],
    ['object without properties is a JSON object', { type: 'object' }, 'JsonObject'],
    ['object with typed additional properties', { type: 'object', additionalProperties: { type: 'integer' } }, '{ [key: string]: number }'],
    ['object closed and empty', { type: 'object', additionalProperties: false }, '{ [key: string]: never }'],
    ['a remote $ref is JSON', { $ref: 'https://example.com/schema.json' }, 'JsonValue'],
    ['a dangling $ref is JSON', { $ref: '#/$defs/missing' }, 'JsonValue'],
  ];
  for (const [name, schema, expected] of cases) {
    test(name, () => assert.equal(typeOf(schema), expected));
  }

  test('object properties: required plain, optional with ?, odd names quoted, descriptions as JSDoc', () => {
    const schema = {
      type: 'object',
      properties: { id: { type: 'string', description: 'The id' }, 'x-count': { type: 'integer' }, class: { type: 'boolean' } },
      required: ['id', 'extra'],
    };
    assert.equal(
      typeOf(schema),
      ['{', '  /** The id */', '  id: string;', '  "x-count"?: number;', '  class?: boolean;', '  extra: JsonValue;', '}'].join('\n'),
    );
  });

  test('nested objects are indented, and closed objects get no index signature', () => {
    const schema = {
      type: 'object',
      properties: { inner: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false } },
      additionalProperties: false,
    };
    assert.equal(typeOf(schema), ['{', '  inner?: {', '    n: number;', '  };', '}'].join('\n'));
  });

  test('an index signature admits every declared property type (and undefined for optional ones)', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } };
    assert.equal(typeOf(schema), ['{', '  a?: string;', '  [key: string]: number | string | undefined;', '}'].join('\n'));
    const patterned = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], patternProperties: { '^x-': { type: 'string' } } };
    assert.equal(typeOf(patterned), ['{', '  a: string;', '  [key: string]: JsonValue;', '}'].join('\n'));
  });

  test('local $refs become named aliases, recursion included', () => {
    const root = {
      type: 'object',
      properties: { node: { $ref: '#/$defs/Node' }, self: { $ref: '#' } },
      $defs: { Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/Node' } } } } },
    };
    const mapper = new SchemaMapper(root, 'Root', (segment) => `Def${toTypeStem(segment)}`);
    assert.equal(mapper.typeOf(root), ['{', '  node?: DefNode;', '  self?: Root;', '}'].join('\n'));
    assert.deepEqual(mapper.definitions(), [{ name: 'DefNode', pointer: '/$defs/Node' }]);
    assert.equal(mapper.typeAt('/$defs/Node'), ['{', '  children?: DefNode[];', '}'].join('\n'));
  });

  test('a $ref directly in a union is expanded in place; a cycle there becomes JSON (TypeScript cannot alias it)', () => {
    const root = { $defs: { A: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/B' }] }, B: { anyOf: [{ type: 'number' }, { $ref: '#/$defs/A' }] } } };
    assert.equal(typeOf({ $ref: '#/$defs/A' }, root), 'JsonValue');
    const flat = { $defs: { S: { type: 'string' } } };
    assert.equal(typeOf({ anyOf: [{ $ref: '#/$defs/S' }, { type: 'null' }] }, flat), 'string | null');
  });

  test('a $defs name with ~ and / escapes resolves', () => {
    const root = { $defs: { 'a/b~c': { type: 'boolean' } } };
    assert.equal(typeOf({ type: 'array', items: { $ref: '#/$defs/a~1b~0c' } }, root), 'DefABC[]');
  });

  test('a deeply nested hostile schema ends in JSON instead of a stack overflow', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 5000; i++) schema = { type: 'array', items: schema };
    assert.match(typeOf(schema), /JsonValue(\[\])+$/);
  });
});

describe('text a server sends cannot escape comments or strings', () => {
  test('*/ in a description is broken up; line separators start new comment lines', () => {
    assert.deepEqual(docComment('ends */ here', ''), ['/** ends *\\/ here */']);
    assert.deepEqual(docComment('one\u2028two', '  '), ['  /**', '   * one', '   * two', '   */']);
    assert.deepEqual(docComment('   ', ''), []);
  });

  test('string literals escape quotes, newlines and line separators', () => {
    assert.equal(stringLiteral('a"b\n\u2028'), '"a\\"b\\n\\u2028"');
  });
});

describe('generateBindings', () => {
  const url = 'http://127.0.0.1:4000/mcp';
  const command = 'subako mcp pull --url http://127.0.0.1:4000/mcp --out tools.ts';

  test('the same tools in any order give the same bytes: sorted by name, no timestamps', () => {
    const tools = [tool('zeta'), tool('alpha', { outputSchema: { type: 'object' } }), tool('Mid')];
    const once = generateBindings({ url, tools, command });
    const again = generateBindings({ url, tools: [...tools].reverse(), command });
    assert.equal(once, again);
    const order = [...once.matchAll(/^  (\w+)\(args/gm)].map((m) => m[1]);
    assert.deepEqual(order, ['Mid', 'alpha', 'zeta'], 'code-unit order, not locale order');
    assert.doesNotMatch(once, /\d{4}-\d{2}-\d{2}/);
  });

  test('the header says the file is generated and names the command', () => {
    const text = generateBindings({ url, tools: [], command });
    const [first, second] = text.split('\n');
    assert.match(first!, /^\/\/ Generated by subako .*Do not edit/);
    assert.equal(second, `//   ${command}`);
    assert.match(text, /^import \{ mcp \} from 'subako';$/m);
  });

  test('a command with line breaks cannot end the header comment', () => {
    const text = generateBindings({ url, tools: [], command: 'subako mcp pull\nexport const evil = 1;' });
    assert.doesNotMatch(text, /^export const evil/m);
  });

  test('colliding names after sanitizing stay distinct, and each wrapper calls its own tool', () => {
    const text = generateBindings({ url, tools: [tool('get-user'), tool('get_user'), tool('getUser'), tool('class'), tool('1st')], command });
    for (const [member, name] of [['get_user', 'get-user'], ['get_user_2', 'get_user'], ['getUser', 'getUser'], ['class_', 'class'], ['_1st', '1st']]) {
      assert.match(text, new RegExp(`^    ${member}: \\(args\\) => call\\("${name}", args\\),$`, 'm'), member);
    }
    for (const type of ['GetUserInput', 'GetUser2Input', 'GetUser3Input', 'ClassInput', 'T1stInput']) {
      assert.match(text, new RegExp(`^export type ${type} = `, 'm'), type);
    }
  });

  test('a tool with an output schema resolves to its structuredContent type; one without, to the CallToolResult', () => {
    const text = generateBindings({
      url,
      tools: [
        tool('add', {
          inputSchema: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
          outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
        }),
        tool('ping'),
      ],
      command,
    });
    assert.match(text, /^  add\(args: AddInput\): Promise<AddOutput>;$/m);
    assert.match(text, /^  ping\(args\?: PingInput\): Promise<CallToolResult>;$/m, 'nothing required: arguments optional');
    assert.match(text, /structured<AddOutput>\(result, url, "add"\)/);
    assert.match(text, /^import \{ mcp, McpServerError \} from 'subako';$/m);
    assert.match(text, new RegExp(`^export function connect\\(auth: McpAuth, url: string = "${url}"\\): Tools \\{$`, 'm'));
  });

  test('an input schema that is not an object is typed as a JSON object (MCP arguments always are)', () => {
    const text = generateBindings({ url, tools: [tool('odd', { inputSchema: { type: 'string' } })], command });
    assert.match(text, /^export type OddInput = JsonObject;$/m);
  });

  test('definitions of different tools with the same name get distinct aliases', () => {
    const withDef = (name: string): ToolListing =>
      tool(name, { inputSchema: { type: 'object', properties: { a: { $ref: '#/$defs/Item' } }, $defs: { Item: { type: 'string' } } } });
    const text = generateBindings({ url, tools: [withDef('one'), withDef('two')], command });
    assert.match(text, /^export type OneItem = string;$/m);
    assert.match(text, /^export type TwoItem = string;$/m);
  });
});

describe('the recorded command', () => {
  test('keeps header names and drops their values; quotes what a shell would split', () => {
    const text = describePullCommand({ url: 'https://x.example/mcp?a=1&b=2', out: 'src/my tools.ts', headerNames: ['Authorization'], oauth: 'gh' });
    assert.equal(text, "subako mcp pull --url 'https://x.example/mcp?a=1&b=2' --out 'src/my tools.ts' --header 'Authorization=<value>' --oauth gh");
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
  });
});
