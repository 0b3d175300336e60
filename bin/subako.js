#!/usr/bin/env node
// The `subako` command: a thin launcher for the compiled CLI.
import { main } from '../dist/src/cli/main.js';

main(process.argv).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err?.stack ?? String(err)); process.exitCode = 1; },
);
