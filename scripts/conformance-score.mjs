// Reads one conformance run's output (the suite's summary) and says how its scored scenarios went: the scenarios of
// the last summary block, less those the summary lists as not scored for the revision (extensions, pending, added
// after the release). Prints one line —
// "scored: P of N passed[; failing: a, b]" — and exits 1 when a scored scenario failed (or no summary was found).
// Usage: node scripts/conformance-score.mjs <run output .txt>
import { readFileSync } from 'node:fs';

const [file] = process.argv.slice(2);
const text = readFileSync(file, 'utf8');
const start = Math.max(text.lastIndexOf('=== SUMMARY ==='), text.lastIndexOf('=== SUITE SUMMARY ==='));
if (start < 0) {
  console.log('scored: no summary (the suite did not finish)');
  process.exit(1);
}
const block = text.slice(start);
const [results, unscoredPart = ''] = block.split(/\nNot scored for /);
const unscored = new Set([...unscoredPart.matchAll(/^\s+[✓✗] (\S+) \(/gm)].map((m) => m[1]));
const scored = [...results.matchAll(/^([✓✗]) (\S+): /gm)]
  .map((m) => ({ passed: m[1] === '✓', name: m[2] }))
  .filter((s) => !unscored.has(s.name));
const failing = scored.filter((s) => !s.passed).map((s) => s.name);
console.log(`scored: ${scored.length - failing.length} of ${scored.length} passed${failing.length > 0 ? `; failing: ${failing.join(', ')}` : ''}`);
process.exit(failing.length > 0 || scored.length === 0 ? 1 : 0);
