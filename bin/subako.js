#!/usr/bin/env node
// The `subako` command: a thin launcher for the compiled CLI.
import { main, unexpectedErrorText } from '../dist/src/cli/main.js';

main(process.argv).then(
  (code) => { process.exitCode = code; },
  (err) => {
    process.stderr.write(unexpectedErrorText(err, process.argv.includes('--debug') || process.env.SUBAKO_DEBUG === '1'));
    process.exitCode = 1;
  },
);
