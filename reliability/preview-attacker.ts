import { spawn } from "node:child_process";
import { once } from "node:events";

// A tenant's previews from a process of its own (by default at a lower priority: a real attacker brings
// its own machine): `loops` loops, each sending one preview after another for `ms`, Retry-After unheeded.
// Each request's template holds a number never used before, so that no cache helps.

export interface PreviewAttack {
  url: string;
  key: string;
  loops: number;
  ms: number;
  /** Each request's template: `before`, a number never used before, `after`. */
  template: { before: string; after: string };
  /**
   * At a lower priority (the default), as a flood's client that stands for another machine; a single
   * loop whose latencies are the figure runs at the service's priority, or it would measure its own
   * waits for a CPU on a busy machine.
   */
  niced?: boolean;
  /** The first number (numbers are never reused within a run: a stopped template is remembered). */
  first?: number;
  /** Stop after this many requests in all (the burst of 400), or run for `ms`. */
  requests?: number;
}

export interface PreviewAttackResult {
  statuses: Record<string, number>;
  /** Latency of each answer of status 200, ms. */
  answered: number[];
  /** Answers of status 429 without a Retry-After of whole seconds ≥ 1. */
  withoutRetryAfter: number;
  /** Answers of status 200 whose `error` was not `expectedError` (when given), and the messages of 4xx other than 429. */
  unexpected: string[];
  elapsedMs: number;
}

export async function attackWithPreviews(
  attack: PreviewAttack,
  expectedError?: string,
): Promise<PreviewAttackResult> {
  const script = `
    const template = (n) => ${JSON.stringify(attack.template.before)} + n + ${JSON.stringify(attack.template.after)};
    const result = { statuses: {}, answered: [], withoutRetryAfter: 0, unexpected: [] };
    const expected = ${JSON.stringify(expectedError ?? null)};
    let next = ${attack.first ?? 0};
    const started = Date.now();
    const more = () => Date.now() - started < ${attack.ms} && (${attack.requests ?? -1} < 0 || next - ${attack.first ?? 0} < ${attack.requests ?? -1});
    async function loop() {
      while (more()) {
        const n = next++;
        const at = performance.now();
        try {
          const res = await fetch(${JSON.stringify(attack.url)}, {
            method: "POST",
            headers: { authorization: "Bearer ${attack.key}", "content-type": "application/json" },
            body: JSON.stringify({ format: "template", template: template(n), template_content_type: "text/plain" }),
          });
          const body = await res.json();
          result.statuses[res.status] = (result.statuses[res.status] ?? 0) + 1;
          if (res.status === 200) {
            result.answered.push(performance.now() - at);
            if (expected !== null && body.error !== expected) result.unexpected.push(String(body.error ?? "rendered"));
          }
          if (res.status === 429 && !(Number(res.headers.get("retry-after")) >= 1)) result.withoutRetryAfter += 1;
          if (res.status >= 400 && res.status !== 429) result.unexpected.push(res.status + " " + String(body.error?.message ?? ""));
        } catch {
          result.statuses.error = (result.statuses.error ?? 0) + 1;
        }
      }
    }
    Promise.all(Array.from({ length: ${attack.loops} }, loop)).then(() => {
      result.elapsedMs = Date.now() - started;
      console.log(JSON.stringify(result));
    });
  `;
  const command = attack.niced === false ? [] : ["nice", "-n", "10"];
  const [file = process.execPath, ...args] = [...command, process.execPath, "-e", script];
  const child = spawn(file, args, {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  await once(child, "exit");
  return JSON.parse(out) as PreviewAttackResult;
}
