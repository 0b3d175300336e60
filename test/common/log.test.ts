/** The logger writes one JSON object per line, errors with their type and message, and is quiet in tests. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../helpers/paths.js';
import { createLogger, defaultLogLevel } from '../../src/common/index.js';

function collect(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line.length > 0));
      done();
    },
  });
  return { lines, destination };
}

test('a line is one JSON object carrying the level, the message, the bindings and the error', () => {
  const { lines, destination } = collect();
  const log = createLogger({ level: 'info', destination }).child({ component: 'sweeper' });
  log.error({ err: new RangeError('the disk is full'), chore: 'trash' }, 'the sweeper failed');
  log.debug({}, 'below the level: not written');
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]);
  assert.equal(line.level, 50);
  assert.equal(line.msg, 'the sweeper failed');
  assert.equal(line.component, 'sweeper');
  assert.equal(line.chore, 'trash');
  assert.equal(line.err.type, 'RangeError');
  assert.equal(line.err.message, 'the disk is full');
});

test('quiet under the test runner unless SUBAKO_LOG_LEVEL asks; info otherwise', () => {
  assert.equal(defaultLogLevel({ NODE_TEST_CONTEXT: 'child-v8' }), 'silent');
  assert.equal(defaultLogLevel({ NODE_TEST_CONTEXT: 'child-v8', SUBAKO_LOG_LEVEL: 'debug' }), 'debug');
  assert.equal(defaultLogLevel({}), 'info');
  assert.equal(defaultLogLevel({ SUBAKO_LOG_LEVEL: 'loud' }), 'info', 'an unknown level is ignored');
});

/** Runs a script that logs through the default (buffered stderr) destination; `killOn`: SIGKILL it once that line is seen. */
function runLogging(script: string, killOn?: string): Promise<{ lines: string[]; code: number | null }> {
  const logModule = pathToFileURL(join(REPO_ROOT, 'dist', 'src', 'common', 'log.js')).href;
  const child = spawn(process.execPath, ['--input-type=module', '-e', `import { createLogger } from ${JSON.stringify(logModule)};\n${script}`], {
    env: { ...process.env, NODE_TEST_CONTEXT: '', SUBAKO_LOG_LEVEL: 'info' }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  const lines = (): string[] => text.split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { msg: string }).msg);
  child.stderr!.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    if (killOn && text.endsWith('\n') && lines().includes(killOn)) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, lines: lines() })));
}

test('buffered lines all reach stderr, in order, when the process exits or crashes', async () => {
  const crashed = await runLogging("const log = createLogger(); for (let i = 0; i < 3; i++) log.info({}, `line ${i}`); setTimeout(() => { log.info({}, 'last'); throw new Error('boom'); }, 10);");
  assert.equal(crashed.code, 1);
  assert.deepEqual(crashed.lines, ['line 0', 'line 1', 'line 2', 'last']);
  const exited = await runLogging("const log = createLogger(); log.info({}, 'one'); log.warn({}, 'two'); process.exit(3);");
  assert.equal(exited.code, 3);
  assert.deepEqual(exited.lines, ['one', 'two']);
});

test('an error line is written at once, after the lines before it', async () => {
  // After the error the process blocks its event loop (no flush timer can run), then logs "after" and exits.
  // Written at once, the error is seen during the block and the process is killed before "after"; written only
  // at the next flush or at exit, all three lines would come, and the exit status 0.
  const run = await runLogging(
    "const log = createLogger(); log.info({}, 'before'); log.error({}, 'now'); const until = Date.now() + 1500; while (Date.now() < until); log.info({}, 'after'); process.exit(0);",
    'now',
  );
  assert.deepEqual(run.lines, ['before', 'now']);
  assert.equal(run.code, null, 'killed while blocked');
});
