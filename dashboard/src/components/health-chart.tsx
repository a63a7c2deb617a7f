import type { DeliveryStats } from "../api-types";
import { percent } from "../format";

const width = 720;
const height = 160;
const padTop = 8;
const padBottom = 22;

function label(stats: DeliveryStats, start: string): string {
  const date = new Date(start);
  return stats.bucket === "hour"
    ? date.toLocaleTimeString("en", { hour: "2-digit", minute: "2-digit", hour12: false })
    : date.toLocaleDateString("en", { month: "short", day: "numeric" });
}

/**
 * Stacked bars of succeeded (bottom) and failed (top) attempts per bucket. The numbers are also in a
 * visually hidden table, so the chart is readable without sight.
 */
export function HealthChart({ stats }: { stats: DeliveryStats }) {
  const max = Math.max(1, ...stats.buckets.map((b) => b.succeeded + b.failed));
  const slot = width / stats.buckets.length;
  const bar = Math.max(2, slot * 0.7);
  const plot = height - padTop - padBottom;
  const every = stats.bucket === "hour" ? 6 : 7;
  const total = stats.succeeded + stats.failed;
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
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Deliveries per ${stats.bucket}`}
        class="chart-svg"
      >
        <line x1="0" x2={width} y1={height - padBottom} y2={height - padBottom} class="chart-axis" />
        {stats.buckets.map((b, i) => {
          const x = i * slot + (slot - bar) / 2;
          const okHeight = (b.succeeded / max) * plot;
          const badHeight = (b.failed / max) * plot;
          const base = height - padBottom;
          return (
            <g key={b.start}>
              <title>{`${label(stats, b.start)}: ${b.succeeded} succeeded, ${b.failed} failed`}</title>
              {b.succeeded + b.failed === 0 && (
                <rect x={x} y={base - 2} width={bar} height={2} class="chart-empty" />
              )}
              {okHeight > 0 && (
                <rect x={x} y={base - okHeight} width={bar} height={okHeight} class="chart-ok" rx="1.5" />
              )}
              {badHeight > 0 && (
                <rect
                  x={x}
                  y={base - okHeight - badHeight}
                  width={bar}
                  height={badHeight}
                  class="chart-bad"
                  rx="1.5"
                />
              )}
              {i % every === 0 && (
                <text x={x + bar / 2} y={height - 6} class="chart-label" text-anchor="middle">
                  {label(stats, b.start)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <table class="visually-hidden">
        <caption>Deliveries per {stats.bucket}</caption>
        <thead>
          <tr>
            <th scope="col">Start</th>
            <th scope="col">Succeeded</th>
            <th scope="col">Failed</th>
          </tr>
        </thead>
        <tbody>
          {stats.buckets.map((b) => (
            <tr key={b.start}>
              <td>{label(stats, b.start)}</td>
              <td>{b.succeeded}</td>
              <td>{b.failed}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
