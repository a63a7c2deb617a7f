// The figures of an A/B run (bench/ab-builds.sh) side by side:
// `npx tsx bench/ab-table.ts <runs dir> [build …]`.
// Reads every <build>-<pair>.log that bench/delivery.ts wrote and prints one Markdown table, a row per
// figure and a column per build, each cell the runs' values in the order they ran (pair 1 ; pair 2 …).
// Then the first build's value over each other build's in the same pair: the median of those ratios
// and their range (above 1 is more: better for deliveries/s, worse for times, CPU and memory). A
// single pair moves by a fifth either way on these machines; the median of many alternated pairs is
// what "within noise" is judged by.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { median } from "./stats.js";

const dir = process.argv[2];
if (!dir) throw new Error("usage: tsx bench/ab-table.ts <runs dir>");

type Figures = Map<string, string>;
const number = (text: string) => text.replace(/,/g, "");

/** The figures one run printed, by name. */
function figuresOf(log: string): Figures {
  const figures: Figures = new Map();
  for (const match of log.matchAll(
    /^\s+(?:round \d+\s+)?(engine[^:\n]*): (\d+) deliveries\/s, p50 ([\d.,]+) ms, p99 ([\d.,]+) ms/gm,
  )) {
    const [, name, perSecond = "", p50 = "", p99 = ""] = match;
    figures.set(`${name}: deliveries/s`, number(perSecond));
    figures.set(`${name}: p50 ms`, number(p50));
    figures.set(`${name}: p99 ms`, number(p99));
  }
  // "How each scenario ran": a scenario's name, then its notes indented below it.
  let scenario = "";
  for (const line of log.split("\n")) {
    const name = /^ {2}(engine[^:]*)$/.exec(line);
    if (name) scenario = name[1] as string;
    if (!scenario) continue;
    const cpu = /CPU per delivery: (\d+) µs \(this process (\d+), Postgres (\d+)/.exec(line);
    if (cpu) {
      figures.set(`${scenario}: CPU µs per delivery, this process`, cpu[2] as string);
      figures.set(`${scenario}: CPU µs per delivery, Postgres`, cpu[3] as string);
    }
    // "Postgres CPU by connection, µs a delivery: the emits' 15.5, the claim's 21.0, …" (bench/cpu.ts).
    const connections = /Postgres CPU by connection, µs a delivery: (.+)$/.exec(line);
    for (const part of connections?.[1]?.split(", ") ?? []) {
      const [, kind, us] = /^(.+) ([\d.]+)$/.exec(part) ?? [];
      if (kind && us) figures.set(`${scenario}: Postgres CPU µs per delivery, ${kind} connections`, us);
    }
    const pg = /Postgres time per event: (\d+) µs/.exec(line);
    if (pg) figures.set(`${scenario}: pg_stat_statements µs per event`, pg[1] as string);
    // "  record and claim: 0.10 calls, 22 µs execution + 0 µs planning per event": µs a call.
    const statement = /^ {8}(.+): ([\d.]+) calls, (\d+) µs execution \+ (\d+) µs planning per event/.exec(
      line,
    );
    if (statement && Number(statement[2]) > 0) {
      const perCall = (Number(statement[3]) + Number(statement[4])) / Number(statement[2]);
      figures.set(`${scenario}: ${statement[1]}, µs a call`, perCall.toFixed(0));
    }
  }
  // The engine's own Postgres CPU: the paced scenario's, less its emit transactions run alone.
  for (const match of log.matchAll(
    /(\d+) events\/s: Postgres CPU \d+ µs per event, of which the emit transactions alone \(no engine running\) \d+ µs; the engine's (-?\d+) µs/g,
  ))
    figures.set(
      `engine, ${match[1]} events/s: the engine's Postgres CPU µs per event (beyond the emits)`,
      match[2] as string,
    );
  for (const match of log.matchAll(
    /(\d+) events\/s: latency split: .*?commit → arrival [^p]*p50 ([\d.]+) \/ p99 ([\d.]+) ms/g,
  )) {
    figures.set(`engine, ${match[1]} events/s: commit → arrival p50 ms`, match[2] as string);
    figures.set(`engine, ${match[1]} events/s: commit → arrival p99 ms`, match[3] as string);
  }
  const memory = /idle RSS (\d+) MiB; draining \d+ events \([\d.]+ s\): peak RSS (\d+) MiB/.exec(log);
  if (memory) {
    figures.set("service process: idle RSS MiB", memory[1] as string);
    figures.set("service process: peak RSS MiB", memory[2] as string);
  }
  return figures;
}

// Each build's runs by pair number (this-10.log after this-9.log), so that index i is pair i + 1 in
// every build.
const runs = new Map<string, Figures[]>();
const logs = readdirSync(dir)
  .flatMap((file) => {
    const match = /^(.+)-(\d+)\.log$/.exec(file);
    return match ? [{ file, build: match[1] as string, pair: Number(match[2]) }] : [];
  })
  .sort((a, b) => a.pair - b.pair);
for (const { file, build } of logs) {
  runs.set(build, [...(runs.get(build) ?? []), figuresOf(readFileSync(path.join(dir, file), "utf8"))]);
}
// In the order given after the directory (the order bench/ab-builds.sh ran them), else by name.
const builds = process.argv.length > 3 ? process.argv.slice(3).filter((b) => runs.has(b)) : [...runs.keys()];
const names = [...new Set(builds.flatMap((build) => (runs.get(build) ?? []).flatMap((f) => [...f.keys()])))];
console.log(`| figure | ${builds.join(" | ")} |`);
console.log(`|---|${builds.map(() => "---").join("|")}|`);
for (const name of names) {
  const cells = builds.map((build) =>
    (runs.get(build) ?? []).map((figures) => figures.get(name) ?? "–").join(" ; "),
  );
  console.log(`| ${name} | ${cells.join(" | ")} |`);
}

const [first, ...others] = builds;
if (first && others.length > 0) {
  const single = (text: string | undefined) =>
    text !== undefined && /^-?[\d.]+$/.test(text) ? Number(text) : undefined;
  console.log(
    `\n| figure | ${others.map((other) => `${first} ÷ ${other}: median of the pairs (lowest–highest, pairs; above 1 is more)`).join(" | ")} |`,
  );
  console.log(`|---|${others.map(() => "---").join("|")}|`);
  for (const name of names) {
    const cells = others.map((other) => {
      const ratios: number[] = [];
      const mine = runs.get(first) ?? [];
      const theirs = runs.get(other) ?? [];
      for (let pair = 0; pair < Math.min(mine.length, theirs.length); pair++) {
        const a = single(mine[pair]?.get(name));
        const b = single(theirs[pair]?.get(name));
        if (a !== undefined && b !== undefined && b !== 0) ratios.push(a / b);
      }
      if (ratios.length === 0) return undefined;
      return `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}, ${ratios.length})`;
    });
    if (cells.some((cell) => cell !== undefined))
      console.log(`| ${name} | ${cells.map((cell) => cell ?? "–").join(" | ")} |`);
  }
}
