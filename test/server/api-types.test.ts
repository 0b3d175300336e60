/**
 * Issue 24, point 6: the console and the command line's REST client are typed from the schemas the server
 * declares the API's bodies with (src/server/api/), not by hand. Shown by the compiler itself: the console
 * (its own tsconfig) and the command line's REST commands compile clean as they are, and a field renamed in
 * one schema — planted in memory, the files on disk untouched — makes both fail where they use it: an
 * answer's field they read, and a request's field they send.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// dist/test/server/api-types.test.js → the repository root.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SESSIONS_SCHEMA = join(ROOT, 'src', 'server', 'api', 'sessions.ts');

/**
 * The compiler's errors in `checked`, in a program made with a tsconfig's options (of `rootNames`, or the
 * tsconfig's files); `planted` replaces a file's text in memory. Only `checked` is type-checked (what it uses
 * is read as needed): the whole of both programs is `npm run build`'s to compile.
 */
function diagnostics(tsconfig: string, rootNames: string[] | null, checked: string, planted: Map<string, string>): { file: string; message: string }[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(tsconfig, { noEmit: true }, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); },
  });
  assert.ok(parsed, `${tsconfig} is read`);
  const host = ts.createCompilerHost(parsed.options);
  const read = host.readFile.bind(host);
  host.readFile = (file) => planted.get(resolve(file)) ?? read(file);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError, create) => {
    const text = planted.get(resolve(file));
    return text === undefined ? getSourceFile(file, language, onError, create) : ts.createSourceFile(file, text, language);
  };
  const program = ts.createProgram({ rootNames: rootNames ?? parsed.fileNames, options: parsed.options, host });
  const source = program.getSourceFile(checked);
  assert.ok(source, `${checked} is in the program`);
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => ({
    file: d.file ? relative(ROOT, d.file.fileName) : '(options)',
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}

/** The console's sessions page, in the console's program (its own tsconfig: the browser's types, no Node). */
const consoleErrors = (planted: Map<string, string>) =>
  diagnostics(join(ROOT, 'console', 'tsconfig.json'), null, join(ROOT, 'console', 'src', 'pages', 'sessions.tsx'), planted);

/** `subako sessions`, one of the command line's REST commands, with the project's options. */
const CLI_SESSIONS = join(ROOT, 'src', 'cli', 'sessions.ts');
const cliErrors = (planted: Map<string, string>) => diagnostics(join(ROOT, 'tsconfig.json'), [CLI_SESSIONS], CLI_SESSIONS, planted);

/** The sessions schema with one text replaced, as the plant. */
function renamed(from: string, to: string): Map<string, string> {
  const text = readFileSync(SESSIONS_SCHEMA, 'utf8');
  assert.ok(text.includes(from), `the schema has ${from}`);
  return new Map([[SESSIONS_SCHEMA, text.replace(from, to)]]);
}

const where = (errors: { file: string; message: string }[]) => errors.map((e) => `${e.file}: ${e.message}`).join('\n');

describe('the console and the command line are typed from the API\'s schemas', () => {
  it('compile clean as they are (the control)', () => {
    assert.match(readFileSync(CLI_SESSIONS, 'utf8'), /from '\.\.\/server\/api\/index\.js'/, 'the sessions command takes the API\'s types');
    assert.deepEqual(where(consoleErrors(new Map())), '');
    assert.deepEqual(where(cliErrors(new Map())), '');
  });

  it('fail to compile where they read an answer\'s field that the schema renamed', () => {
    const plant = renamed('id: z.string(), agent_id: z.string(), agent_version: z.int(),', 'id: z.string(), agent_id: z.string(), agent_revision: z.int(),');
    const inConsole = consoleErrors(plant);
    assert.ok(inConsole.some((e) => e.file === 'console/src/pages/sessions.tsx' && /agent_version/.test(e.message)), where(inConsole));
    const inCli = cliErrors(plant);
    assert.ok(inCli.some((e) => e.file === 'src/cli/sessions.ts' && /agent_version/.test(e.message)), where(inCli));
  });

  it('fail to compile where they send a request\'s field that the schema renamed', () => {
    const plant = renamed('  vault_ids: z.array(z.string().min(1).max(64)).max(16).optional(),', '  vaults: z.array(z.string().min(1).max(64)).max(16).optional(),');
    const inConsole = consoleErrors(plant);
    assert.ok(inConsole.some((e) => e.file === 'console/src/pages/sessions.tsx' && /vault_ids/.test(e.message)), where(inConsole));
    const inCli = cliErrors(plant);
    assert.ok(inCli.some((e) => e.file === 'src/cli/sessions.ts' && /vault_ids/.test(e.message)), where(inCli));
  });
});
