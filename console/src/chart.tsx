// A bar chart in SVG of our own: one bar per bucket (calls), its errors drawn over it from the base. Each bar
// carries its numbers (data-calls, data-errors, a <title>), so what is drawn can be read back and checked.
export interface Bar {
  start: string;
  calls: number;
  errors: number;
}

const WIDTH = 720;
const HEIGHT = 160;
const AXIS = 28;

/** A round number at or above `n`, for the axis: 1, 2, 5, 10, 20, 50… */
function niceCeiling(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= n)!;
}

export function BarChart({ bars, label, tick }: { bars: Bar[]; label: string; tick: (start: string) => string }) {
  const top = niceCeiling(Math.max(0, ...bars.map((b) => b.calls)));
  const step = (WIDTH - AXIS) / Math.max(1, bars.length);
  const gap = step > 4 ? 1 : 0;
  const y = (n: number) => HEIGHT - 16 - (n / top) * (HEIGHT - 24);
  // A label every sixth of the way, whatever the number of bars.
  const every = Math.max(1, Math.round(bars.length / 6));
  return (
    <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label} preserveAspectRatio="none">
      <line class="axis" x1={AXIS} y1={y(0)} x2={WIDTH} y2={y(0)} />
      <text class="axis-label" x={AXIS - 4} y={y(top) + 4} text-anchor="end">{top}</text>
      <text class="axis-label" x={AXIS - 4} y={y(0)} text-anchor="end">0</text>
      {bars.map((b, i) => {
        const x = AXIS + i * step;
        return (
          <g key={b.start} class="bar" data-start={b.start} data-calls={b.calls} data-errors={b.errors}>
            <title>{`${tick(b.start)}: ${b.calls} call${b.calls === 1 ? '' : 's'}, ${b.errors} error${b.errors === 1 ? '' : 's'}`}</title>
            <rect class="calls" x={x} y={y(b.calls)} width={Math.max(1, step - gap)} height={y(0) - y(b.calls)} />
            {b.errors > 0 ? <rect class="errors" x={x} y={y(b.errors)} width={Math.max(1, step - gap)} height={y(0) - y(b.errors)} /> : null}
            {i % every === 0 ? <text class="axis-label" x={x} y={HEIGHT - 2}>{tick(b.start)}</text> : null}
          </g>
        );
      })}
    </svg>
  );
}
