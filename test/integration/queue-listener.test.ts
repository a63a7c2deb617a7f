import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveriesChannel } from "../../src/delivery-engine/emit.js";
import { QueueListener } from "../../src/delivery-engine/queue-listener.js";
import { createLogger } from "../../src/logger.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { eventually } from "../support/receiver.js";

// The worker's LISTEN connection (queue-listener.ts): a NOTIFY on the deliveries channel wakes it; a
// connection Postgres ends is made again, and what was notified meanwhile is made up for by one wake.

let database: TestDatabase;
let admin: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await database.drop();
});

const notify = () => admin.query(`SELECT pg_notify($1, '')`, [deliveriesChannel]);
/** The backends of this database whose last statement was the listener's LISTEN. */
const listenerBackends = `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1`;
const listenStatement = [`LISTEN ${deliveriesChannel}`];
const listeners = async () => (await admin.query(listenerBackends, listenStatement)).rowCount;

describe("the worker's LISTEN connection", () => {
  it("wakes on a NOTIFY, reconnects after Postgres ends it, and stops", async () => {
    let wakes = 0;
    const listener = new QueueListener(database.url, () => wakes++, createLogger("silent"));
    await listener.start();
    await notify();
    await eventually(async () => (wakes === 1 ? true : undefined));

    // Postgres ends the connection (a restart, a failover, an administrator): it is made again,
    // and the listener wakes once for what it may have missed.
    await admin.query(`SELECT pg_terminate_backend(pid) FROM (${listenerBackends}) b`, listenStatement);
    await eventually(async () => (wakes === 2 && (await listeners()) === 1 ? true : undefined));
    await notify();
    await eventually(async () => (wakes === 3 ? true : undefined));

    await listener.stop();
    await eventually(async () => ((await listeners()) === 0 ? true : undefined));
    await notify();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(wakes).toBe(3);
  }, 30_000);
});
