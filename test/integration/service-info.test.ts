import { afterAll, beforeAll, expect, it } from "vitest";
import { version } from "../../src/version.js";
import { createProject } from "../support/api-fixtures.js";
import { startTestService, type TestService } from "../support/service.js";

// GET /api/service-info: what the dashboard needs to speak of this installation correctly (whether
// projects are namespaces, which retry waits apply). Without a cluster, kubernetes is false.

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ DELIVERY_RETRY_DELAYS_MS: "1000,2000,3000,4000,5000" });
});
afterAll(() => service.close());

it("says standalone, the version and the configured retry waits, to any valid key", async () => {
  const project = await createProject(service, "info", "Info");
  const limited = await service.api("POST", "/api-keys", {
    body: { name: "limited", project_ids: [project] },
  });
  for (const key of [undefined, limited.body.key]) {
    const info = await service.api("GET", "/service-info", { key });
    expect(info.status).toBe(200);
    expect(info.body).toEqual({
      version,
      kubernetes: false,
      retry_delays_ms: [1000, 2000, 3000, 4000, 5000],
    });
  }
  expect((await service.api("GET", "/service-info", { key: null })).status).toBe(401);
});
