/**
 * ABI 1, "the model is told the function crashed, with the last 4 KiB of stderr": for every crash reason,
 * every way the stderr was written (one write or many, before the deciding line or after it), on the two
 * places a guest runs — the supervised sandbox process (the server's) and worker threads of the caller's own
 * process (`subako call`'s). The other paths (CLI, REST, MCP, NATS worker) are in test/server/stderr-tail-*.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import { FunctionHost } from '../../src/function/host.js';
import type { LoadedPackage } from '../../src/function/host.js';
import { Scratch } from './guests.js';
import { assertRow, rowArguments, rowName, STDERR_ROWS, STDERR_TAIL_WASM, TABLE_LIMITS } from './stderr-tail-rows.js';

for (const isolation of ['process', 'thread'] as const) {
  describe(`the last 4 KiB of stderr reach the crash report and the model (guests in ${isolation === 'process' ? 'the sandbox process' : 'worker threads of this process'})`, { concurrency: 2 }, () => {
    let host: FunctionHost;
    let scratch: Scratch;
    let loaded: LoadedPackage;
    before(async () => {
      host = new FunctionHost({ poolSize: 2, isolation, limits: TABLE_LIMITS });
      scratch = new Scratch();
      loaded = await host.load({ name: 'tail', version: '1.0.0', moduleBytes: STDERR_TAIL_WASM, assetsDir: null });
    });
    after(async () => {
      await host.close();
      scratch.cleanup();
    });

    for (const row of STDERR_ROWS) {
      test(rowName(row), async () => {
        const outcome = await host.call(loaded, 'crash', rowArguments(row), { tmpDir: scratch.dir('tmp') });
        const modelText = outcome.model.map((block) => String(block.text ?? '')).join('\n');
        assertRow(row, { reason: outcome.crash?.reason, stderr: outcome.crash?.stderr, modelText });
        // The outcome's own tail is the same text (the call log keeps it whatever the status).
        assertRow(row, { reason: outcome.crash?.reason, stderr: outcome.stderr, modelText });
      });
    }
  });
}
