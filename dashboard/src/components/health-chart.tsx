import type { DeliveryStats } from "../api-types";
import { percent } from "../format";
import { useWidth } from "../use-width";
import { bucketName, scaleTop, xLabels } from "./chart-axes";

// Drawn at the size it is shown (the SVG's user units are CSS pixels), so its text is as large as the
// page's small text at any width, instead of shrinking with a viewBox scaled to fit a phone.
const height = 190;
const left = 36;
const top = 8;
const bottom = 40;

/**
 * Stacked bars of succeeded (bottom) and failed (top) attempts per bucket, on a y scale with grid lines.
 * The numbers are also in a visually hidden table, so the chart is readable without sight.
 */
export function HealthChart({ stats }: { stats: DeliveryStats }) {
  const { ref, width } = useWidth(600);
  const total = stats.succeeded + stats.failed;
  const yMax = scaleTop(Math.max(0, ...stats.buckets.map((b) => b.succeeded + b.failed)));
  const plotWidth = Math.max(1, width - left);
  const plotHeight = height - top - bottom;
  const base = top + plotHeight;
  const slot = plotWidth / stats.buckets.length;
  const bar = Math.max(2, slot * 0.7);
  const y = (value: number) => base - (value / yMax) * plotHeight;
  return (
    <figure class="chart">
      <figcaption class="chart-summary">
        <span>
          <strong>{total}</strong> {total === 1 ? "attempt" : "attempts"}
        </span>
        <span class="legend legend-ok">
          <strong>{stats.succeeded}</strong> succeeded
        </span>
        <span class="legend legend-bad">
          <strong>{stats.failed}</strong> failed
        </span>
        <span>
          <strong>{percent(stats.succeeded, total)}</strong> success rate
        </span>
      </figcaption>
      <div ref={ref} class="chart-area">
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-label={`Deliveries per ${stats.bucket}, ${stats.buckets.length} ${stats.bucket}s`}
          class="chart-svg"
        >
          {[0, yMax / 2, yMax].filter(Number.isInteger).map((tick) => (
            <g key={tick}>
              <line
                x1={left}
                x2={width}
                y1={y(tick)}
                y2={y(tick)}
                class={tick === 0 ? "chart-axis" : "chart-grid"}
              />
              <text x={left - 6} y={y(tick) + 4} class="chart-label chart-y" text-anchor="end">
                {tick}
              </text>
            </g>
          ))}
          {stats.buckets.map((b, i) => {
            const x = left + i * slot + (slot - bar) / 2;
            return (
              <g key={b.start}>
                <title>{`${bucketName(stats, b.start)}: ${b.succeeded} succeeded, ${b.failed} failed`}</title>
                {b.succeeded > 0 && (
                  <rect
                    x={x}
                    y={y(b.succeeded)}
                    width={bar}
                    height={base - y(b.succeeded)}
                    class="chart-ok"
                  />
                )}
                {b.failed > 0 && (
                  <rect
                    x={x}
                    y={y(b.succeeded + b.failed)}
                    width={bar}
                    height={y(b.succeeded) - y(b.succeeded + b.failed)}
                    class="chart-bad"
                  />
                )}
              </g>
            );
          })}
          {xLabels(stats).map(({ index, main, date }) => {
            const x = left + index * slot + slot / 2;
            return (
              <g key={index}>
                <line x1={x} x2={x} y1={base} y2={base + 4} class="chart-axis" />
                <text x={x} y={base + 17} class="chart-label chart-x" text-anchor="middle">
                  {main}
                </text>
                {date && (
                  <text x={x} y={base + 33} class="chart-label chart-date" text-anchor="middle">
                    {date}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
      </div>
      <table class="visually-hidden">
        <caption>Deliveries per {stats.bucket}</caption>
        <thead>
          <tr>
            <th scope="col">{stats.bucket === "hour" ? "Hour" : "Day"}</th>
            <th scope="col">Succeeded</th>
            <th scope="col">Failed</th>
          </tr>
        </thead>
        <tbody>
          {stats.buckets.map((b) => (
            <tr key={b.start}>
              <td>{bucketName(stats, b.start)}</td>
              <td>{b.succeeded}</td>
              <td>{b.failed}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
