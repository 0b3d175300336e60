// One client scenario's result as the suite's own summary writes it — "✓ name: P passed, F failed[, W warnings]" —
// read from the checks.json the suite saved for that run (conformance.sh runs client scenarios one at a time and
// puts these lines together into a summary conformance-score.mjs reads). No checks.json (the suite did not finish
// the scenario) is one failed check. A run the suite called failed with no failed check (the client exited with an
// error where the scenario does not expect one) is noted on the line, not counted: the suite's summary counts checks.
// Usage: node scripts/conformance-checks.mjs <scenario> <folder the run's -o pointed at> [the run's output .txt]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [scenario, folder, output] = process.argv.slice(2);
const found = [];
const walk = (dir) => {
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {
    return; // no folder: nothing was saved
  }
  for (const name of names) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name === 'checks.json') found.push(path);
  }
};
walk(folder);
const checks = found.length === 1 ? JSON.parse(readFileSync(found[0], 'utf8')) : [{ status: 'FAILURE' }];
const count = (status) => checks.filter((c) => c.status === status).length;
const [passed, checkFailures, warnings] = [count('SUCCESS'), count('FAILURE'), count('WARNING')];
let verdict = '';
try {
  verdict = output === undefined ? '' : readFileSync(output, 'utf8');
} catch {
  verdict = ''; // no output saved: the checks decide
}
const clientFailed = checkFailures === 0 && warnings === 0 && verdict.includes('OVERALL: FAILED');
const failed = checkFailures;
const mark = failed === 0 && warnings === 0 ? '✓' : '✗';
console.log(`${mark} ${scenario}: ${passed} passed, ${failed} failed${warnings > 0 ? `, ${warnings} warnings` : ''}${clientFailed ? ' (the client exited with an error)' : ''}`);
