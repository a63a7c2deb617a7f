// Rendering cost of the delivery formats: microseconds per body for each chat card (the docs' example
// event and a hostile one, every text field far past every limit) and for a Liquid template, parsed
// cold and from the parse cache, in this thread and through a template thread (the hop every render
// takes, formats/template-pool.ts). One process, no I/O: what a format adds to each delivery's CPU.
// Run: npx tsx bench/formats.ts   Env: BENCH_ROUNDS (5), BENCH_CALLS (2000 per round).
import { exampleEnvelope, exampleTemplate } from "../scripts/docs/format-examples.js";
import { renderDiscord } from "../src/formats/discord.js";
import type { Envelope } from "../src/formats/envelope.js";
import { renderGoogleChat } from "../src/formats/googlechat.js";
import { renderMsTeams } from "../src/formats/msteams.js";
import { renderSlack } from "../src/formats/slack.js";
import { closeTemplateThreads, renderTemplate } from "../src/formats/template.js";
import { parseTemplate, renderInThread } from "../src/formats/template-engine.js";
import type { FormatInput } from "../src/formats/types.js";
import { hostileEnvelope } from "../test/unit/formats/events.js";

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const calls = Number(process.env.BENCH_CALLS ?? 2000);
const input = (envelope: Envelope, template: string | null = null): FormatInput => ({
  envelope,
  template,
  templateContentType: null,
});

/** The median over rounds of the mean time per call, in microseconds. */
async function perCall(run: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < calls; i++) await run(i); // warm-up
  const means: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await run(i);
    means.push(Number(process.hrtime.bigint() - start) / 1000 / calls);
  }
  return means.sort((a, b) => a - b)[Math.floor(means.length / 2)] as number;
}

const example = input(exampleEnvelope("succeeded"));
const hostile = input(hostileEnvelope());
const rows: [string, number][] = [];
for (const [name, render] of [
  ["slack", renderSlack],
  ["msteams", renderMsTeams],
  ["discord", renderDiscord],
  ["googlechat", renderGoogleChat],
] as const) {
  rows.push([`${name}, example event`, await perCall(() => render(example))]);
  rows.push([`${name}, hostile event`, await perCall(() => render(hostile))]);
}
// A text never seen before each call defeats the parse cache: the cost of a first delivery or a preview.
let fresh = 0;
rows.push([
  "template parse, cold",
  await perCall(() => parseTemplate(`${exampleTemplate}{% comment %}${fresh++}{% endcomment %}`)),
]);
rows.push(["template parse, cached", await perCall(() => parseTemplate(exampleTemplate))]);
rows.push([
  "template render in this thread (cached parse)",
  await perCall(() => renderInThread(exampleTemplate, exampleEnvelope("succeeded") as never, null)),
]);
rows.push([
  "template render on a template thread, one at a time",
  await perCall(() => renderTemplate(input(exampleEnvelope("succeeded"), exampleTemplate))),
]);
// Many renders waiting at once (the sends in flight of a burst): the thread's throughput.
const batch = 64;
rows.push([
  `template render on a template thread, ${batch} at once (per render)`,
  await perCall(async (i) => {
    if (i % batch !== 0) return;
    const envelope = exampleEnvelope("succeeded");
    await Promise.all(Array.from({ length: batch }, () => renderTemplate(input(envelope, exampleTemplate))));
  }),
]);
await closeTemplateThreads();

console.log(`median of ${rounds} rounds of ${calls} calls, µs per call (Node ${process.version})`);
for (const [name, us] of rows) console.log(`${name.padEnd(60)} ${us.toFixed(1).padStart(8)}`);
