import { stoppedMessage } from "../src/formats/template.js";
import { startReceiver } from "../test/support/receiver.js";
import { apiKey, emit, startDatabase, startService, until } from "./harness.js";
import { attackWithPreviews } from "./preview-attacker.js";
import { type Figure, figure } from "./scenarios.js";
import { alternate, tenant } from "./tenant-rounds.js";
import { call } from "./tenant-storm.js";

// The issue's template bomb: one filter chain over a range is one piece of a template, and liquidjs
// checks its render time only between pieces, so a 2 KB template held the process ~10 s per render,
// every tenant's requests and /healthz waiting. Tenant A previews unique bombs one after another, has a
// webhook whose template is one (an event a second to it, and a test event of it each round); tenant
// B reads its webhooks meanwhile.

const scenario =
  "template bomb: where_exp over 1..20000 with 200 terms, previews, test events and deliveries";
const stopped = `The template failed to render: ${stoppedMessage}`;
/** The bomb, around a number that makes each one unique (a stopped template is remembered by its text). */
const bombOf = {
  before: `{{ (1..20000) | where_exp: "x", "${Array.from({ length: 200 }, () => "x == 0").join(" or ")} or x == -`,
  after: '" | size }}',
};
const bomb = (n: number) => `${bombOf.before}${n}${bombOf.after}`;
const rounds = 2;
const quietMs = 5_000;
const attackMs = 8_000;

async function timed<T>(run: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

export async function templateBomb(): Promise<Figure[]> {
  const db = await startDatabase();
  const receiver = await startReceiver();
  const service = await startService(db.url);
  try {
    const a = await tenant(service.url, "bomb-a");
    const b = await tenant(service.url, "bomb-b");
    const hook = (project: number, path: string, extra: object = {}) =>
      call(service.url, apiKey, "POST", `/projects/${project}/webhooks`, {
        url: `${receiver.url}${path}`,
        events: ["deployment.created"],
        ...extra,
      });
    // The API refuses the bomb when saved (its example event runs away too); written in the row, it is
    // a template saved before that check, or declared by a Webhook resource (only parsed), would be.
    const runaway = await hook(a.project, "/bomb", {
      format: "template",
      template: "ok",
      template_content_type: "text/plain",
    });
    await db.pool.query("UPDATE webhooks SET template = $1 WHERE id = $2", [bomb(0), runaway.id]);
    const beside = await hook(a.project, "/beside-bomb");
    await hook(b.project, "/b");
    const emitted: string[] = [];
    const healthz: number[] = [];
    const testEvents: number[] = [];
    const result = await alternate(service.url, b, rounds, quietMs, async (round) => {
      let attacking = true;
      const events = (async () => {
        while (attacking) {
          emitted.push(...(await emit(db.pool, a.project, 1)));
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      })();
      const probes = (async () => {
        while (attacking) {
          healthz.push(await timed(() => fetch(`${service.url}/healthz`).then((r) => r.text())));
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const test = `${service.url}/api/projects/${a.project}/webhooks/${runaway.id}/test`;
      testEvents.push(
        await timed(() =>
          fetch(test, { method: "POST", headers: { authorization: `Bearer ${a.key}` } }).then((r) =>
            r.text(),
          ),
        ),
      );
      const previews = await attackWithPreviews(
        {
          url: `${service.url}/api/projects/${a.project}/webhooks/preview`,
          key: a.key,
          loops: 1,
          ms: attackMs,
          template: bombOf,
          first: 1_000 * (round + 1),
          niced: false,
        },
        stopped,
      );
      attacking = false;
      await Promise.all([events, probes]);
      return previews;
    });
    // Every event recorded for both of A's webhooks: the bomb's failed with the message, the other sent.
    const records = (webhook: number) =>
      call(
        service.url,
        apiKey,
        "GET",
        `/projects/${a.project}/webhooks/${webhook}/deliveries?limit=100`,
      ) as unknown as Promise<{ event_id: string; success: boolean; error_message: string | null }[]>;
    const automatic = <T extends { event_id: string }>(list: T[]) =>
      list.filter((r) => emitted.includes(r.event_id));
    await until(async () => automatic(await records(beside.id)).length >= emitted.length, 30_000);
    await until(async () => automatic(await records(runaway.id)).length >= emitted.length, 30_000);
    const bombRecords = automatic(await records(runaway.id));
    const besideRecords = automatic(await records(beside.id));
    const answered = result.attacks.flatMap((attack) => attack.answered);
    const unexpected = result.attacks.flatMap((attack) => attack.unexpected);
    process.stderr.write(
      `template-bomb: ${result.summary}; previews ${JSON.stringify(result.attacks.map((r) => r.statuses))}, ` +
        `longest ${Math.max(...answered).toFixed(0)} ms; test events ${testEvents.map((ms) => ms.toFixed(0)).join(", ")} ms; ` +
        `/healthz longest ${Math.max(...healthz).toFixed(0)} ms; events ${emitted.length}` +
        `${unexpected.length > 0 ? `; other answers: ${JSON.stringify([...new Set(unexpected)])}` : ""}\n`,
    );
    // The first stopped; the rest failed at once as stopped within the last minute (the same text, and why).
    const wrongBomb = bombRecords.filter(
      (r) =>
        r.success ||
        !r.error_message?.startsWith(`Not sent: the template body could not be rendered: ${stopped}`),
    );
    return [
      figure(
        scenario,
        `bomb previews answered (${answered.length}), the longest`,
        Math.max(...answered),
        2_000,
        " ms",
      ),
      figure(
        scenario,
        "bomb previews not answered with the stopped error",
        unexpected.length + (answered.length === 0 ? 1 : 0),
        0,
      ),
      // A test event of the bomb may wait on the template thread behind one bomb preview running to its
      // stop, then be stopped itself: two renders' wall-clock limits (1,500 ms each). The issue's 2 s is
      // the preview's bound, above; measured here 1.9 s on an idle machine, too near 2 s to be a bound.
      figure(scenario, "test events of the bomb webhook, the longest", Math.max(...testEvents), 3_000, " ms"),
      figure(scenario, "/healthz during the attack, the longest", Math.max(...healthz), 1_000, " ms"),
      figure(
        scenario,
        `B's read p99 / its quiet p99 (${result.quietP99.toFixed(1)} ms, at least 10)`,
        result.ratio,
        3,
      ),
      figure(scenario, "B's reads that failed", result.failed, 0),
      figure(
        scenario,
        `the bomb webhook's deliveries (${bombRecords.length} of ${emitted.length}) not failed with the message`,
        wrongBomb.length + emitted.length - bombRecords.length,
        0,
      ),
      figure(
        scenario,
        `deliveries beside the bomb (${emitted.length} events) not sent`,
        emitted.length - besideRecords.filter((r) => r.success).length,
        0,
      ),
    ];
  } finally {
    service.child.kill("SIGKILL");
    await service.exited;
    await receiver.close();
    await db.close();
  }
}
