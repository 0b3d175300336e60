// Calls the built module the way an agent would, through `subako call` (run `npm run build` first).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const project = fileURLToPath(new URL('..', import.meta.url));
const subako = process.env.SUBAKO_BIN ?? '{{sdk_dir}}/../../bin/subako.js';

// `subako call` exits 0 when the tool answered a result and 1 when it answered a tool error (or crashed).
function call(tool, args) {
  const run = spawnSync(process.execPath, [subako, 'call', project, tool, JSON.stringify(args), '--json'], { encoding: 'utf8' });
  assert.ok(run.stdout, `subako call printed nothing (exit ${run.status}): ${run.stderr}`);
  const outcome = JSON.parse(run.stdout);
  assert.equal(run.status, outcome.status === 'ok' ? 0 : 1, `exit ${run.status} for ${outcome.status}: ${run.stderr}`);
  return outcome;
}

test('greet answers with structured content', () => {
  const outcome = call('greet', { name: 'Ada', times: 2 });
  assert.equal(outcome.status, 'ok');
  assert.deepEqual(outcome.result.structuredContent, { message: 'Hello, Ada!', greetings: ['Hello, Ada!', 'Hello, Ada!'] });
});

test('a missing argument is a tool error that names it', () => {
  const outcome = call('greet', {});
  assert.equal(outcome.status, 'tool_error');
  assert.match(outcome.model[0].text, /"name"/);
});

test('an argument of the wrong type is a tool error that names it', () => {
  const outcome = call('greet', { name: 'Ada', times: 'twice' });
  assert.equal(outcome.status, 'tool_error');
  assert.match(outcome.model[0].text, /"times" must be an integer/);
});
