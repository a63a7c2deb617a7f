// The figures of an A/B run (bench/ab-builds.sh) side by side:
// `npx tsx bench/ab-table.ts <runs dir> [build …]`.
// Reads every <build>-<pair>.log that bench/delivery.ts wrote and prints one Markdown table, a row per
// figure and a column per build, each cell the runs' values in the order they ran (pair 1 / pair 2 …).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

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
    const [, name, perSecond, p50, p99] = match as unknown as string[];
    figures.set(`${name}: deliveries/s`, number(perSecond as string));
    figures.set(`${name}: p50 / p99 ms`, `${number(p50 as string)} / ${number(p99 as string)}`);
  }
  // "How each scenario ran": a scenario's name, then its notes indented below it.
  let scenario = "";
  for (const line of log.split("\n")) {
    const name = /^ {2}(engine[^:]*)$/.exec(line);
    if (name) scenario = name[1] as string;
    if (!scenario) continue;
    const cpu = /CPU per delivery: (\d+) µs \(this process (\d+), Postgres (\d+)/.exec(line);
    if (cpu)
      figures.set(`${scenario}: CPU µs per delivery (this process + Postgres)`, `${cpu[2]} + ${cpu[3]}`);
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
  ))
    figures.set(`engine, ${match[1]} events/s: commit → arrival p50 / p99 ms`, `${match[2]} / ${match[3]}`);
  const memory = /idle RSS (\d+) MiB; draining \d+ events \([\d.]+ s\): peak RSS (\d+) MiB/.exec(log);
  if (memory) figures.set("service process: idle / peak RSS MiB", `${memory[1]} / ${memory[2]}`);
  return figures;
}

const runs = new Map<string, Figures[]>();
for (const file of readdirSync(dir).sort()) {
  const match = /^(.+)-(\d+)\.log$/.exec(file);
  if (!match) continue;
  const build = match[1] as string;
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
