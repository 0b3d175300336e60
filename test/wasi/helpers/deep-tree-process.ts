/**
 * Run as a child process under a small descriptor limit (`ulimit -n`): builds a tree DEPTH directories
 * deep (each made relative to its parent's descriptor, so no path is ever long) with a file and a link at
 * every level, removes it with removeTree, and prints the result as JSON. A walk that held a descriptor
 * per level would fail with EMFILE long before the bottom.
 */
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeTree } from '../../../src/wasi/index.js';

const depth = Number(process.argv[2]);
const outside = process.argv[3];
const parent = mkdtempSync(join(tmpdir(), 'subako-deep-'));
mkdirSync(join(parent, 'tree'));
let fd = openSync(join(parent, 'tree'), constants.O_RDONLY | constants.O_DIRECTORY);
for (let level = 0; level < depth; level++) {
  writeFileSync(`/proc/self/fd/${fd}/file`, 'x');
  symlinkSync(outside, `/proc/self/fd/${fd}/out`);
  mkdirSync(`/proc/self/fd/${fd}/d`);
  const next = openSync(`/proc/self/fd/${fd}/d`, constants.O_RDONLY | constants.O_DIRECTORY);
  closeSync(fd);
  fd = next;
}
closeSync(fd);
const result = await removeTree(parent, 'tree');
process.stdout.write(JSON.stringify({ ...result, parent }));
