import type { DeliveryStats } from "../api-types";

// The health chart's axes: the top of its y scale, and the labels under its bars.

type Bucket = DeliveryStats["buckets"][number];

const time = (date: Date) =>
  date.toLocaleTimeString("en", { hour: "2-digit", minute: "2-digit", hour12: false });
const day = (date: Date) => date.toLocaleDateString("en", { month: "short", day: "numeric" });

/** A bucket as the table and the tooltips name it: "Nov 25, 14:00" or "Nov 25". */
export function bucketName(stats: DeliveryStats, start: string): string {
  const date = new Date(start);
  return stats.bucket === "hour" ? `${day(date)}, ${time(date)}` : day(date);
}

/** The top of the y axis: the smallest 1, 2 or 5 × 10^n at or above the tallest bar (at least 2). */
export function scaleTop(tallest: number): number {
  for (let magnitude = 1; ; magnitude *= 10) {
    for (const step of [1, 2, 5]) if (step * magnitude >= Math.max(2, tallest)) return step * magnitude;
  }
}

/** Which buckets get an x label (every 6 hours, every 7 days), and a date under it where the day changes. */
export function xLabels(stats: DeliveryStats): { index: number; main: string; date?: string }[] {
  const every = stats.bucket === "hour" ? 6 : 7;
  let lastDay = "";
  const labels = [];
  for (let index = 0; index < stats.buckets.length; index += every) {
    const date = new Date((stats.buckets[index] as Bucket).start);
    if (stats.bucket === "day") {
      labels.push({ index, main: day(date) });
      continue;
    }
    const today = day(date);
    labels.push({ index, main: time(date), ...(today !== lastDay ? { date: today } : {}) });
    lastDay = today;
  }
  return labels;
}
