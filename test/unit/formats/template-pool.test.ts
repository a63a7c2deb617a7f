import { afterEach, describe, expect, it } from "vitest";
import { TemplatePool, TemplateThreadFailure } from "../../../src/formats/template-pool.js";
import { waitUntil } from "../../support/wait.js";
import { eventOf } from "./events.js";

// The template threads' pool itself: lazy threads that end when idle, and a deadline that stops a
// runaway without touching the tasks queued behind it.

const envelope = eventOf("deployment.succeeded") as unknown as Record<string, unknown>;
const render = (template: string) =>
  ({ kind: "render", template, envelope, rollout: null, contentType: "text/plain" }) as const;
const terms = Array.from({ length: 200 }, () => "x == 0").join(" or ");
const runaway = `{{ (1..20000) | where_exp: "x", "${terms}" | size }}`;

const generous = { cpuMs: 5_000, wallMs: 10_000 };
let pool: TemplatePool | undefined;
afterEach(async () => {
  await pool?.close();
});

describe("template threads", { timeout: 30_000 }, () => {
  it("start on first use and end when idle", async () => {
    pool = new TemplatePool({ threads: 1, idleMs: 200, limits: { render: generous, check: generous } });
    expect(pool.size).toBe(0);
    const answer = await pool.run(render("{{ payload.project_name }}"));
    expect(answer).toEqual({ ok: true, rendered: { contentType: "text/plain", body: "shop" } });
    expect(pool.size).toBe(1);
    const current = pool;
    await waitUntil("the idle thread to end", async () => (current.size === 0 ? true : undefined));
  });

  it("stop a runaway at the deadline; a task queued behind it runs in full on a new thread", async () => {
    pool = new TemplatePool({
      threads: 1,
      idleMs: 60_000,
      limits: { render: { cpuMs: 1_000, wallMs: 3_000 }, check: generous },
    });
    const stopped = pool.run(render(runaway)).catch((error: unknown) => error);
    const behind = pool.run(render("{{ payload.project_name }} behind"));
    const error = await stopped;
    expect(error).toBeInstanceOf(TemplateThreadFailure);
    expect((error as TemplateThreadFailure).failure).toBe("stopped");
    // Its deadline counts from when a thread took it, not from when it was queued.
    expect(await behind).toEqual({
      ok: true,
      rendered: { contentType: "text/plain", body: "shop behind" },
    });
    expect(pool.size).toBe(1);
  });

  it("stop renders of a stopped template still queued without running them", async () => {
    pool = new TemplatePool({
      threads: 1,
      idleMs: 60_000,
      limits: { render: { cpuMs: 500, wallMs: 3_000 }, check: generous },
    });
    const settled: string[] = [];
    const track = (name: string, task: Promise<unknown>) =>
      task.then(
        () => settled.push(`${name} rendered`),
        (error: unknown) => settled.push(`${name} ${(error as TemplateThreadFailure).failure}`),
      );
    // Queued in this order on one thread: the second copy of the runaway would run to the deadline
    // again after the cheap render (a preview, another tenant's delivery) that waits between them.
    await Promise.all([
      track("runaway", pool.run(render(runaway))),
      track("behind", pool.run(render("{{ payload.project_name }}"))),
      track("its copy", pool.run(render(runaway))),
    ]);
    expect(settled).toEqual(["runaway stopped", "its copy stopped", "behind rendered"]);
  });

  it("answer a template's own errors as data, and check sources", async () => {
    pool = new TemplatePool({ threads: 2, idleMs: 60_000, limits: { render: generous, check: generous } });
    const [syntax, fine] = await Promise.all([
      pool.run({ kind: "check", template: "a\n{% if %}" }),
      pool.run({ kind: "check", template: "{{ payload.url }}" }),
    ]);
    expect(syntax).toEqual({
      ok: false,
      kind: "syntax",
      message: expect.stringMatching(/^Line 2: /),
      line: 2,
    });
    expect(fine).toEqual({ ok: true });
  });

  it("refuse the task of a thread that fails, and start another for the next", async () => {
    const failing = new URL(
      `data:text/javascript,${encodeURIComponent(
        'import { parentPort } from "node:worker_threads"; parentPort.on("message", () => { throw new Error("a fault of ours"); }); parentPort.postMessage({ ready: true });',
      )}`,
    );
    pool = new TemplatePool(
      { threads: 1, idleMs: 60_000, limits: { render: generous, check: generous } },
      { url: failing, execArgv: [] },
    );
    await expect(pool.run({ kind: "check", template: "x" })).rejects.toThrow("a fault of ours");
    await expect(pool.run({ kind: "check", template: "y" })).rejects.toThrow("a fault of ours");
  });
});
