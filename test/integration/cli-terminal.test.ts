import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/client/api-client.js";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// A hostile receiver and tenant against the operator's terminal: the built CLI prints what they
// control (the receiver's response body, the payload's fields) with every control character and bidi
// override shown as a visible escape; --json still prints the API's text exactly. The API accepts only
// ASCII URLs, so the tables' own cases are in test/unit/terminal-text.test.ts.

/** Clears the screen, moves up to forge two lines over the record, sets the title, writes the clipboard. */
const hostileBody = [
  "\x1b[2J\x1b[H",
  "\x1b[8A\rsuccess:        true\x1b[K",
  "\nstatus_code:    200",
  "\x1b]0;all good\x07",
  "\x1b]52;c;cm0gLXJmIH4K\x1b\\",
  "\x9b31m",
  "\u202egnp.exe\u202c",
  "\x7f",
].join("");

// Any control character (C0, DEL, C1) but the line feed, any bidi control, the line/paragraph separators.
const rawControl = /[^\n\P{Cc}]|\p{Bidi_Control}|[\u2028\u2029]/u;

let service: TestService;
let receiver: Receiver;
let projectId: number;
let webhookId: number;
let deliveryId: number;

const cli = (args: string[]) =>
  runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, ["hooks", ...args]);
const ids = () => ["--project-id", String(projectId), "--webhook-id", String(webhookId)];

beforeAll(async () => {
  assertBuilt();
  service = await startTestService();
  receiver = await startReceiver();
  receiver.on("/hostile", (_request, res) => res.writeHead(500).end(hostileBody));
  const client = new ApiClient({ baseUrl: service.baseUrl, apiKey: service.adminKey });
  projectId = (await client.createProject({ name: "Shop", slug: "shop" })).id;
  webhookId = (
    await client.createWebhook(projectId, { url: `${receiver.url}/hostile`, events: ["deployment.failed"] })
  ).id;
  await withTransaction(service.pool, (db) =>
    emitEvent(db, {
      eventType: "deployment.failed",
      projectId,
      payload: { deployment_id: 1, commit_message: "fix \u202eevil\u202c \x9b2J done" },
    }),
  );
  const path = `/projects/${projectId}/webhooks/${webhookId}/deliveries`;
  deliveryId = await waitUntil(
    "the first delivery's id",
    async () => (await service.api("GET", path)).body[0]?.id,
  );
});

afterAll(async () => {
  await receiver?.close();
  await service?.close();
});

describe("text a receiver or tenant controls, printed by the CLI", () => {
  it("deliveries show: the response body and payload show their escapes, the record stays failed", async () => {
    const show = ["deliveries", "show", ...ids(), "--delivery-id", String(deliveryId)];
    const { code, stdout } = await cli(show);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(rawControl);
    expect(stdout).toMatch(/^success: +false$/m);
    expect(stdout).toMatch(/^status_code: +500$/m);
    expect(stdout).toContain(
      "\nresponse_body:\n\\x1b[2J\\x1b[H\\x1b[8A\\rsuccess:        true\\x1b[K\nstatus_code:    200" +
        "\\x1b]0;all good\\x07\\x1b]52;c;cm0gLXJmIH4K\\x1b\\\\x9b31m\\u{202e}gnp.exe\\u{202c}\\x7f\n",
    );
    expect(stdout).toContain('"commit_message": "fix \\u{202e}evil\\u{202c} \\x9b2J done"');
    // --json is the API's text, control characters and all (JSON escapes them itself).
    const json = await cli([...show, "--json"]);
    expect(JSON.parse(json.stdout).response_body).toBe(hostileBody);
  });
});
