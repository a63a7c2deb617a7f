import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import { deliveriesChannel } from "../../src/delivery-engine/emit.js";
import { QueueListener } from "../../src/delivery-engine/queue-listener.js";
import { createLogger } from "../../src/logger.js";
import { listenForDisabledWebhooks } from "../../src/operator/disabled-webhooks.js";
import { webhooksDisabledChannel } from "../../src/webhooks/auto-disable.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/wait.js";

// The two LISTEN connections, both made by db/listener.ts: the worker's (its own connection; a NOTIFY on
// the deliveries channel wakes it) and the leader's disabled webhooks (a pooled connection; the payload
// names the webhooks). A connection Postgres ends is made again; the worker is woken once for what it may
// have missed meanwhile.

let database: TestDatabase;
let admin: pg.Client;
let pool: Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  pool = createPool(database.url, 2);
});
afterAll(async () => {
  await pool.end();
  await admin.end();
  await database.drop();
});

/**
 * The backends of this database listening on `channel`: their last statement was a listener's LISTEN,
 * and it finished. A LISTEN takes effect when it commits; one still running shows its text already,
 * and a NOTIFY sent then is not delivered to it.
 */
const listenerBackends = `SELECT pid FROM pg_stat_activity
                           WHERE datname = current_database() AND query = $1 AND state = 'idle'`;
const listeners = async (channel: string) =>
  (await admin.query<{ pid: number }>(listenerBackends, [`LISTEN ${channel}`])).rows.map((row) => row.pid);

/**
 * Sends a NOTIFY and returns once Postgres has delivered it: `admin` listens too and sees its own. A
 * listener whose backend is gone cannot be told after that.
 */
async function notifyAndSee(channel: string, payload: string): Promise<void> {
  const seen = new Promise<void>((resolve) => {
    const onNotification = (message: pg.Notification) => {
      if (message.channel !== channel || message.payload !== payload) return;
      admin.off("notification", onNotification);
      resolve();
    };
    admin.on("notification", onNotification);
  });
  await admin.query(`LISTEN ${channel}`);
  await admin.query("SELECT pg_notify($1, $2)", [channel, payload]);
  await seen;
  await admin.query(`UNLISTEN ${channel}`);
}

const silent = createLogger("silent");
const cases = [
  {
    name: "the worker's queue listener",
    channel: deliveriesChannel,
    payload: "",
    /** What it was told: one entry per wake. */
    start: async (told: unknown[]) => {
      const listener = new QueueListener(database.url, () => told.push("wake"), silent);
      await listener.start();
      return listener;
    },
    afterReconnect: ["wake", "wake"],
  },
  {
    name: "the leader's disabled-webhooks listener",
    channel: webhooksDisabledChannel,
    payload: "3,4",
    start: async (told: unknown[]) => {
      const listener = listenForDisabledWebhooks(pool, (ids) => told.push(ids), silent);
      await waitUntil("the disabled-webhooks LISTEN", async () =>
        (await listeners(webhooksDisabledChannel)).length === 1 ? true : undefined,
      );
      return listener;
    },
    // Nothing to make up for: the periodic status resync catches what was missed.
    afterReconnect: [[3, 4]],
  },
];

describe.each(cases)("$name", ({ channel, payload, start, afterReconnect }) => {
  it("is told of a NOTIFY, listens again after Postgres ends its connection, and stops", async () => {
    const told: unknown[] = [];
    const listener = await start(told);
    await notifyAndSee(channel, payload);
    await waitUntil("the first notification", async () => (told.length === 1 ? true : undefined));
    const first = told[0];

    // Postgres ends the connection (a restart, a failover, an administrator): it is made again.
    const ended = await listeners(channel);
    expect(ended).toHaveLength(1);
    await admin.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid", [ended]);
    // A new backend: the one ended is listed, still listening, until it has exited (slow on a busy
    // machine), and a NOTIFY sent then reaches no listener of ours.
    await waitUntil("LISTEN again", async (saw) => {
      const backends = await listeners(channel);
      saw({ told, backends, ended });
      return told.length === afterReconnect.length &&
        backends.length === 1 &&
        !ended.includes(backends[0] as number)
        ? true
        : undefined;
    });
    await notifyAndSee(channel, payload);
    await waitUntil("a notification after the reconnect", async () =>
      told.length === afterReconnect.length + 1 ? true : undefined,
    );
    expect(told).toEqual([...afterReconnect, first]);

    await listener.stop();
    await waitUntil("its backend gone", async () =>
      (await listeners(channel)).length === 0 ? true : undefined,
    );
    await notifyAndSee(channel, payload);
    expect(told).toHaveLength(afterReconnect.length + 1);
  }, 30_000);
});
