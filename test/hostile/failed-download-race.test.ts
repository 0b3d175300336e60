/**
 * Finding 9, the failed download: `egress/output.ts` removed a failed download by its path string, the
 * race of finding 1 turned into deleting host files. A racer thread swaps `/volume/tmp/d` for a relative
 * symlink `d -> ../../..` (whose target holds the host's `victim.txt`) while downloads to
 * `/volume/tmp/d/victim.txt` fail on the call's write budget. Before the fix the host's file was truncated
 * or removed within a few tries; now it is never touched. The partial file is removed relative to the
 * directory it was written in, and only while the name there still is the file written: the deterministic
 * cases below show a file a guest renames onto the name survives, and a moved directory does not redirect.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openVolumeFileForWrite } from '../../src/egress/volume-path.js';
import { callBridge, makeRun, startServer, type TestServer } from '../egress/helpers/servers.js';
import { startSwapRacer } from './helpers/swap-racer.js';
import { volumeBridge } from './helpers/volume-bridge.js';

const VICTIM = 'host file that must survive';
// A count, not a time: on a loaded machine the tries take longer, and the test waits for them (harm came within a
// few tries before the fix).
const TRIES = 300;
const PARALLEL = 4;

let base: string;
let tmp: string;
let server: TestServer;

before(async () => {
  base = mkdtempSync(join(tmpdir(), 'subako-hostile-discard-'));
  tmp = join(base, 'vol', 'ses', 'tmp');
  mkdirSync(tmp, { recursive: true });
  server = await startServer((_req, res) => {
    res.end('a response longer than the write budget of the call');
  });
});
after(async () => {
  await server.close();
  rmSync(base, { recursive: true, force: true });
});

const victimIntact = (): boolean => existsSync(join(base, 'victim.txt')) && readFileSync(join(base, 'victim.txt'), 'utf8') === VICTIM;

describe('finding 9: a failed download is removed without ever touching a host file', () => {
  it('downloads that fail while the directory is swapped for a link never remove or change the host file', async () => {
    writeFileSync(join(base, 'victim.txt'), VICTIM);
    const handler = volumeBridge(tmp, server.port);
    const racer = await startSwapRacer({ parent: tmp, name: 'd', linkTarget: '../../..', clearStray: true });
    let tries = 0;
    let budgetFailures = 0;
    const otherAnswers: string[] = [];
    let firstHarm: number | null = null;
    const started = Date.now();
    let cycles: number;
    try {
      const lane = async (): Promise<void> => {
        while (tries < TRIES) {
          const n = ++tries;
          const answer = await callBridge(handler, {
            url: server.url('api.example.test', '/'), output: { type: 'file', path: '/volume/tmp/d/victim.txt' },
          }, makeRun({ budgetBytes: 8 }));
          if (answer.error?.kind === 'write_budget') budgetFailures++;
          else if (answer.error?.kind !== 'bad_path') otherAnswers.push(JSON.stringify(answer));
          if (!victimIntact()) {
            firstHarm ??= n;
            writeFileSync(join(base, 'victim.txt'), VICTIM);
          }
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, lane));
    } finally {
      cycles = await racer.stop();
    }
    const ms = Date.now() - started;
    assert.equal(firstHarm, null, `the host file was removed or changed (first at try ${firstHarm} of ${tries}, ${ms} ms)`);
    assert.deepEqual(otherAnswers, [], 'every download failed on the budget or was refused as bad_path');
    assert.ok(budgetFailures > 0, `no download got as far as failing (racer cycles ${cycles})`);
    console.log(`# failed downloads: ${tries} tries in ${ms} ms (${budgetFailures} failed on the budget), ${cycles} swaps`);
  });

  it('the partial file is removed from the directory it was written in, even after that directory moved', async () => {
    const mounts = [{ guestPath: '/volume/tmp', hostPath: tmp }];
    writeFileSync(join(base, 'victim.txt'), VICTIM);
    const file = await openVolumeFileForWrite('/volume/tmp/moved/victim.txt', mounts);
    await file.handle.write(Buffer.from('partial'));
    // The guest moves the directory away and puts a link to the host's directory in its place.
    renameSync(join(tmp, 'moved'), join(tmp, 'elsewhere'));
    symlinkSync('../../..', join(tmp, 'moved'));
    await file.finish(true);
    assert.equal(existsSync(join(tmp, 'elsewhere', 'victim.txt')), false, 'the partial file went');
    assert.ok(victimIntact(), 'the host file stayed');
  });

  it('a file the guest renamed onto the name meanwhile is not the file written, and stays', async () => {
    const mounts = [{ guestPath: '/volume/tmp', hostPath: tmp }];
    const file = await openVolumeFileForWrite('/volume/tmp/kept/out.bin', mounts);
    await file.handle.write(Buffer.from('partial'));
    writeFileSync(join(tmp, 'kept', 'other'), 'the guest\'s own file');
    renameSync(join(tmp, 'kept', 'other'), join(tmp, 'kept', 'out.bin'));
    await file.finish(true);
    assert.equal(readFileSync(join(tmp, 'kept', 'out.bin'), 'utf8'), 'the guest\'s own file');
  });

  it('without a race, a failed download leaves no file and a finished one stays', async () => {
    const mounts = [{ guestPath: '/volume/tmp', hostPath: tmp }];
    const failed = await openVolumeFileForWrite('/volume/tmp/plain/failed.bin', mounts);
    await failed.finish(true);
    assert.equal(existsSync(join(tmp, 'plain', 'failed.bin')), false);
    const done = await openVolumeFileForWrite('/volume/tmp/plain/done.bin', mounts);
    await done.handle.write(Buffer.from('whole'));
    await done.finish(false);
    assert.equal(readFileSync(join(tmp, 'plain', 'done.bin'), 'utf8'), 'whole');
  });
});
