/**
 * Nothing a guest answers may crash the host: whatever JSON a guest puts where the result goes, the call
 * ends as ok, tool_error or a crash with a reason — never a thrown error, never a hang. Driven through a
 * real guest (abi_probe's `raw` tool answers `arguments.result` verbatim) with values from fast-check.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FunctionHost } from '../../src/function/host.js';
import { probe, Scratch } from './guests.js';

let host: FunctionHost;
let scratch: Scratch;
before(() => {
  host = new FunctionHost({ poolSize: 2, limits: { callTimeoutMs: 5000 } });
  scratch = new Scratch();
});
after(async () => {
  await host.close();
  scratch.cleanup();
});

const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), fc.integer()) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('image'), mimeType: fc.string(), data: fc.oneof(fc.base64String(), fc.string()) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('resource_link'), uri: fc.oneof(fc.webUrl(), fc.string().map((s) => `volume:///${s}`)), name: fc.string() }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.string(), extra: fc.jsonValue() }),
);
const result = fc.oneof(
  fc.jsonValue(),
  fc.record({ content: fc.array(block, { maxLength: 4 }), isError: fc.oneof(fc.boolean(), fc.jsonValue()), structuredContent: fc.jsonValue(), resultType: fc.oneof(fc.constant('complete'), fc.string()) }, { requiredKeys: ['content'] }),
);

test('any answer in the result slot ends as ok, tool_error or a crash with a reason', async () => {
  const loaded = await host.load(probe());
  const tmpDir = scratch.dir('tmp');
  await fc.assert(
    fc.asyncProperty(result, async (value) => {
      const outcome = await host.call(loaded, 'raw', { result: value }, { tmpDir });
      assert.ok(['ok', 'tool_error', 'crash'].includes(outcome.status));
      if (outcome.status === 'crash') {
        assert.ok(['bad_result', 'result_type'].includes(outcome.crash!.reason), `${outcome.crash!.reason}: ${outcome.crash!.message}`);
      } else {
        assert.ok(Array.isArray(outcome.model));
        for (const b of outcome.model) assert.ok(b.type === 'text' || b.type === 'image', JSON.stringify(b));
      }
    }),
    { numRuns: 150 },
  );
});
