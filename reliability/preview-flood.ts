import { templateLimits } from "../src/formats/template-limits.js";
import { startDatabase, startService } from "./harness.js";
import { attackWithPreviews, type PreviewAttackResult } from "./preview-attacker.js";
import { type Figure, figure } from "./scenarios.js";
import { alternate, tenant } from "./tenant-rounds.js";

// The preview flood: 8 previews at once of unique templates that each run to the render limit
// took tenant B's read p99 from 79 to 6,683 ms, and 400 previews went through in 2 s without a 429.
// Tenant A floods previews from a process of its own, Retry-After unheeded; tenant B reads its webhooks.
// Then tenant C sends 400 previews at once: no more than its pace renders, the rest answered 429.

const scenario = "preview flood: unique 32 KB templates that run to the render limit, 8 at once";
const burstScenario = "preview flood: 400 previews at once (another tenant)";
const rounds = 2;
const quietMs = 5_000;
const attackMs = 8_000;
const perMinute = 120;

/**
 * A billion iterations (liquidjs stops it at its render limit, twice), then about 32 KB of output tags
 * whose parse costs a few hundred milliseconds; the number in front makes each one unique.
 */
const loops =
  "{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..1000) %}{% endfor %}{% endfor %}{% endfor %}";
const slowTemplate = {
  before: "",
  after: `${loops}${"{{a}}".repeat(Math.floor((templateLimits.sourceChars - loops.length - 10) / 5))}`,
};

const serverErrors = (results: PreviewAttackResult[]) =>
  results
    .flatMap((result) => Object.entries(result.statuses))
    .filter(([status]) => !/^[24]\d\d$/.test(status))
    .reduce((sum, [, n]) => sum + n, 0);

export async function previewFlood(): Promise<Figure[]> {
  const db = await startDatabase();
  const service = await startService(db.url);
  try {
    const a = await tenant(service.url, "flood-a");
    const b = await tenant(service.url, "flood-b");
    const previews = `${service.url}/api/projects/${a.project}/webhooks/preview`;
    const result = await alternate(service.url, b, rounds, quietMs, (round) =>
      attackWithPreviews({
        url: previews,
        key: a.key,
        loops: 8,
        ms: attackMs,
        template: slowTemplate,
        first: 1_000_000 * (round + 1),
      }),
    );
    // The pace is per project: a third tenant's bucket is full (A's would be a minute after its rounds).
    const c = await tenant(service.url, "flood-c");
    const burst = await attackWithPreviews({
      url: `${service.url}/api/projects/${c.project}/webhooks/preview`,
      key: c.key,
      loops: 20,
      ms: 60_000,
      requests: 400,
      template: { before: "{{ event.id }} ", after: "" },
    });
    const rendered = burst.statuses["200"] ?? 0;
    const paceAllows = perMinute + Math.ceil((burst.elapsedMs / 60_000) * perMinute) + 1;
    process.stderr.write(
      `preview-flood: ${result.summary}; A ${JSON.stringify(result.attacks.map((r) => r.statuses))}; ` +
        `burst of 400 in ${burst.elapsedMs} ms: ${JSON.stringify(burst.statuses)}; ` +
        `other answers: ${JSON.stringify([...new Set([...result.attacks, burst].flatMap((r) => r.unexpected.filter((u) => !u.startsWith("The template failed to render"))))])}\n`,
    );
    const all = [...result.attacks, burst];
    return [
      figure(
        scenario,
        `B's read p99 / its quiet p99 (${result.quietP99.toFixed(1)} ms, at least 10)`,
        result.ratio,
        3,
      ),
      figure(scenario, "B's reads that failed", result.failed, 0),
      figure(scenario, "A's previews answered 5xx or not at all", serverErrors(all), 0),
      figure(
        scenario,
        "A's 429s without Retry-After",
        all.reduce((sum, r) => sum + r.withoutRetryAfter, 0),
        0,
      ),
      figure(burstScenario, `previews rendered (the pace: ${perMinute} a minute)`, rendered, paceAllows),
      figure(burstScenario, "previews answered 429", -(burst.statuses["429"] ?? 0), -(400 - paceAllows)),
    ];
  } finally {
    service.child.kill("SIGKILL");
    await service.exited;
    await db.close();
  }
}
