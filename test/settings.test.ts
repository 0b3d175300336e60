/**
 * Every setting is declared once (src/settings.ts), and the rest comes from the declarations: `subako serve
 * --help` and `subako worker --help` list each one a command takes (flag, variable, key in the file); a
 * setting planted in the table is in the help, the flags, the environment and the file without another edit;
 * and a bad value given by a flag, a variable and the file at once is refused in one line naming each.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { defaultsOf, resolveSettings } from '../src/config.js';
import { nonEmptyText, wholeNumber } from '../src/setting-kinds.js';
import { SETTINGS, SETTINGS_COMMANDS, fileKey, flagName, settingsOf, type SettingDeclaration, type SettingsCommand } from '../src/settings.js';
import { addSettingOptions, settingFlags, settingHelp } from '../src/cli/setting-options.js';
import { problemsOf } from './helpers/validation.js';
import { REPO_ROOT } from './helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'subako-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The command's environment: none of the parent's SUBAKO_ variables, a data home of this test's own. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SUBAKO_')));
  return { ...env, SUBAKO_HOME: dir, ...extra };
}

function subako(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...args], { encoding: 'utf8', timeout: 60_000, env, cwd: dir });
}

const oneSpaced = (text: string): string => text.replace(/\s+/g, ' ');

describe('the settings table', () => {
  test('within each command, every setting has its own name, flag and variable; variables are SUBAKO_ ones', () => {
    for (const command of SETTINGS_COMMANDS) {
      const ours = settingsOf(command);
      assert.ok(ours.length > 0, command);
      const lists: [string, (string | undefined)[]][] = [
        ['name', ours.map((d) => d.name)], ['flag', ours.map(flagName).filter(Boolean)], ['variable', ours.map((d) => d.env).filter(Boolean)],
      ];
      for (const [what, values] of lists) {
        assert.deepEqual(values.filter((value, i) => values.indexOf(value) !== i), [], `subako ${command}: one ${what} per setting`);
      }
      for (const declaration of ours) if (declaration.env) assert.match(declaration.env, /^SUBAKO_[A-Z0-9_]+$/);
    }
  });

  test('each key of the file is declared once, and every setting is taken by some command', () => {
    const keys = SETTINGS.map((d) => fileKey(d));
    assert.deepEqual(keys.filter((key, i) => keys.indexOf(key) !== i), []);
    for (const declaration of SETTINGS as readonly SettingDeclaration[]) {
      assert.ok(SETTINGS_COMMANDS.some((command) => declaration.help[command] !== undefined), declaration.name);
      // A default made from the machine has to say in --help what it comes to (a switch's or a list's shows none).
      if (typeof declaration.default === 'function' && declaration.kind.flagShape === 'value') assert.ok(declaration.shownDefault !== undefined, declaration.name);
      for (const command of Object.keys(declaration.requiredBy ?? {}) as SettingsCommand[]) assert.ok(declaration.help[command], `${declaration.name}: required by ${command}, which takes it`);
    }
  });
});

describe('the README\'s tables of settings', () => {
  test('name every declared setting: its key, its flag and its variable', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration and limits'), readme.indexOf('### Running on PostgreSQL'));
    // The rows of each table, under its header: the worker object's table says so in its first column.
    const rows: Record<'top' | 'worker', string[]> = { top: [], worker: [] };
    let table: 'top' | 'worker' = 'top';
    for (const line of section.split('\n')) {
      if (line.startsWith('| setting') || line.startsWith('| key')) table = line.includes('"worker"') ? 'worker' : 'top';
      else if (line.startsWith('| `')) rows[table].push(line);
    }
    for (const declaration of SETTINGS as readonly SettingDeclaration[]) {
      const row = rows[declaration.section ?? 'top'].find((line) => line.split('|')[1].includes(`\`${declaration.name}\``) &&
        (!declaration.flag || line.includes(`\`${flagName(declaration)}\``)));
      assert.ok(row, `a row for ${fileKey(declaration)} with its flag ${flagName(declaration) ?? '(none)'}`);
      if (declaration.env) assert.ok(row.includes(`\`${declaration.env}\``), `${fileKey(declaration)}'s row names ${declaration.env}`);
    }
  });
});

describe('--help comes from the declarations', () => {
  for (const command of SETTINGS_COMMANDS) {
    test(`subako ${command} --help lists every setting it takes, with its flag, variable and key, and no flag that is not declared`, () => {
      const run = subako([command, '--help']);
      assert.equal(run.status, 0, run.stderr);
      const help = oneSpaced(run.stdout);
      for (const declaration of settingsOf(command)) {
        if (!declaration.flag) continue;
        assert.ok(help.includes(`${declaration.flag} ${oneSpaced(settingHelp(declaration, command))}`), `${declaration.flag} as declared, in:\n${run.stdout}`);
        assert.ok(help.includes(`"${fileKey(declaration)}" in the config file`), fileKey(declaration));
        if (declaration.env) assert.ok(help.includes(`$${declaration.env}`), declaration.env);
      }
      const flags = [...run.stdout.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((match) => match[1]);
      const declared = settingsOf(command).map(flagName);
      // The command's own options, which are not settings.
      const own = command === 'serve' ? ['--config', '--debug', '--help'] : ['--config', '--help'];
      assert.deepEqual(flags.filter((flag) => !declared.includes(flag) && !own.includes(flag)), []);
      assert.deepEqual(declared.filter((flag) => flag && !flags.includes(flag)), []);
    });
  }
});

describe('a setting planted in the table is everywhere without another edit', () => {
  const level = {
    name: 'plantedLevel', kind: wholeNumber(1, 9), default: 3, unit: 'ms', env: 'SUBAKO_PLANTED_LEVEL', flag: '--planted-level <n>',
    help: { serve: 'how planted it is', worker: 'how planted it is here' },
  } as const satisfies SettingDeclaration;
  const shelf = {
    name: 'plantedShelf', kind: nonEmptyText, section: 'worker', env: 'SUBAKO_PLANTED_SHELF', flag: '--planted-shelf <name>',
    help: { worker: 'where the worker plants' },
  } as const satisfies SettingDeclaration;
  const table: SettingDeclaration[] = [...SETTINGS, level, shelf];
  const machine = { home: '/home/someone', cores: 4 };
  const resolve = (command: SettingsCommand, sources: Omit<Parameters<typeof resolveSettings>[1], 'defaults'>, within: readonly SettingDeclaration[] = table) =>
    resolveSettings(command, { defaults: defaultsOf(command, machine, within), ...sources }, within);
  const parsed = (command: SettingsCommand, args: string[]): ReturnType<typeof settingFlags> => {
    const program = addSettingOptions(new Command(command).exitOverride(), command, table);
    program.parse(args, { from: 'user' });
    return settingFlags(program, command, table);
  };

  test('in each command\'s --help, as declared', () => {
    const serveHelp = oneSpaced(addSettingOptions(new Command('serve'), 'serve', table).helpInformation());
    assert.ok(serveHelp.includes('--planted-level <n> how planted it is (default 3 ms); $SUBAKO_PLANTED_LEVEL; "plantedLevel" in the config file'), serveHelp);
    assert.ok(!serveHelp.includes('--planted-shelf'), 'serve does not take the worker\'s setting');
    const workerHelp = oneSpaced(addSettingOptions(new Command('worker'), 'worker', table).helpInformation());
    assert.ok(workerHelp.includes('--planted-level <n> how planted it is here (default 3 ms)'), workerHelp);
    assert.ok(workerHelp.includes('--planted-shelf <name> where the worker plants; $SUBAKO_PLANTED_SHELF; "worker.plantedShelf" in the config file'), workerHelp);
  });

  test('from its default, the file, the environment and the flag, each winning over the one before', () => {
    assert.equal(resolve('serve', {}).plantedLevel, 3);
    const file = { path: '/etc/subako.config.json', input: { plantedLevel: 4, worker: { plantedShelf: 'from-file' } } };
    assert.equal(resolve('serve', { file }).plantedLevel, 4);
    assert.equal(resolve('serve', { file, env: { SUBAKO_PLANTED_LEVEL: '5' } }).plantedLevel, 5);
    assert.equal(resolve('serve', { file, env: { SUBAKO_PLANTED_LEVEL: '5' }, flags: parsed('serve', ['--planted-level', '6']) }).plantedLevel, 6);
    const worker = resolve('worker', { file, env: { SUBAKO_NATS_URL: 'nats://127.0.0.1:4222' }, flags: parsed('worker', ['--planted-shelf', 'from-flag']) });
    assert.deepEqual([worker.plantedLevel, worker.plantedShelf], [4, 'from-flag']);
    assert.equal(resolve('worker', { file, env: { SUBAKO_NATS_URL: 'nats://h:4222', SUBAKO_PLANTED_SHELF: 'from-env' } }).plantedShelf, 'from-env');
  });

  test('a bad value from each source is refused naming the flag, the variable or the key, and what it takes', () => {
    assert.deepEqual(problemsOf(() => resolve('serve', {
      file: { path: 'f.json', input: { plantedLevel: 12, worker: { plantedShelf: '' } } },
      env: { SUBAKO_PLANTED_LEVEL: '0' },
      flags: parsed('serve', ['--planted-level', 'ten']),
    })), [
      '"plantedLevel" in f.json is 12; it takes a whole number from 1 to 9',
      '"worker.plantedShelf" in f.json is ""; it takes a non-empty string',
      'SUBAKO_PLANTED_LEVEL is 0; it takes a whole number from 1 to 9',
      '--planted-level is "ten"; it takes a whole number from 1 to 9',
    ]);
  });

  test('the same key without the plant is not a setting: what the plant added came from it alone', () => {
    const [problem] = problemsOf(() => resolve('serve', { file: { path: 'f.json', input: { plantedLevel: 4 } } }, SETTINGS));
    assert.match(problem, /^"plantedLevel" in f\.json is not a setting; known settings: port, host, /);
    assert.equal(resolve('serve', { env: { SUBAKO_PLANTED_LEVEL: '5' } }, SETTINGS).plantedLevel, undefined);
  });
});

describe('a bad value by flag, variable and file at once: one line naming each, exit 1', () => {
  test('subako serve', () => {
    const file = join(dir, 'serve.json');
    writeFileSync(file, JSON.stringify({ port: 'eighty', worker: { pool: 0 } }));
    const run = subako(['serve', '--config', file, '--memory', '8'], cleanEnv({ SUBAKO_SESSION_QUEUE: 'many' }));
    assert.equal(run.status, 1);
    assert.equal(run.stderr,
      `subako serve: cannot start: a setting is not valid: "port" in ${file} is "eighty"; it takes a whole number from 0 to 65535; ` +
      `"worker.pool" in ${file} is 0; it takes a whole number from 1 to 256; ` +
      'SUBAKO_SESSION_QUEUE is "many"; it takes a whole number from 0 to 10000; --memory is 8; it takes a whole number from 16 to 4096\n');
  });

  test('subako worker', () => {
    const file = join(dir, 'worker.json');
    writeFileSync(file, JSON.stringify({ natsPrefix: 'a b', port: 'serve\'s business', worker: { metricsPort: 70_000 } }));
    const run = subako(['worker', '--config', file, '--pool', 'all'], cleanEnv({ SUBAKO_NATS_URL: 'nats://127.0.0.1:4222', SUBAKO_CALL_TIMEOUT_MS: '5' }));
    assert.equal(run.status, 1);
    assert.equal(run.stderr,
      `subako worker: cannot start: "natsPrefix" in ${file} is "a b"; it takes 1-64 of A-Z, a-z, 0-9, "_" and "-"; ` +
      `"worker.metricsPort" in ${file} is 70000; it takes a whole number from 0 to 65535; ` +
      'SUBAKO_CALL_TIMEOUT_MS is 5; it takes a whole number from 100 to 3600000; --pool is "all"; it takes a whole number from 1 to 256\n');
  });
});
