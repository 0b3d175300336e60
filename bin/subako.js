#!/usr/bin/env node
// The `subako` command: a thin launcher for the compiled CLI.
import module from 'node:module';
import { join } from 'node:path';
import { subakoHome } from '../dist/src/common/data-home.js';

// Node 22.1 and later keep the code V8 compiled for our modules across runs, so a fresh command starts without
// compiling them again. The cache lives in the user's own data home, not in a shared temporary directory that
// another user could write. Node 20 has no such cache: the call does nothing there.
module.enableCompileCache?.(join(subakoHome(), 'cache', 'node-compile'));

const { main, unexpectedErrorText } = await import('../dist/src/cli/main.js');

main(process.argv).then(
  (code) => { process.exitCode = code; },
  (err) => {
    process.stderr.write(unexpectedErrorText(err, process.argv.includes('--debug') || process.env.SUBAKO_DEBUG === '1'));
    process.exitCode = 1;
  },
);
