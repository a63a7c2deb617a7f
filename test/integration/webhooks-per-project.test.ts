import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject } from "../support/api-fixtures.js";
import { startTestService, type TestService } from "../support/service.js";

// A project may have at most WEBHOOKS_PER_PROJECT_LIMIT webhooks (default 100): a project-scoped key
// once created 2,000 in 3.5 s, and the unpaged list then answered 626 KB.

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ WEBHOOKS_PER_PROJECT_LIMIT: "3" });
});
afterAll(() => service.close());

const body = { url: "https://receiver.example/h", events: ["deployment.created"] };

async function project(slug: string): Promise<number> {
  return createProject(service, slug);
}

it("answers 409 limit_reached past the limit, creating nothing, and counts per project", async () => {
  const full = await project("full");
  for (let i = 0; i < 3; i++) {
    expect((await service.api("POST", `/projects/${full}/webhooks`, { body })).status).toBe(201);
  }
  const refused = await service.api("POST", `/projects/${full}/webhooks`, { body });
  expect(refused.status).toBe(409);
  expect(refused.body.error).toEqual({
    code: "limit_reached",
    message: `Project ${full} already has 3 webhooks, the most a project may have (WEBHOOKS_PER_PROJECT_LIMIT, set by the service's admin). Delete one before creating another.`,
  });
  expect((await service.api("GET", `/projects/${full}/webhooks`)).body).toHaveLength(3);
  // Another project has its own count; deleting one makes room again.
  const other = await project("other");
  expect((await service.api("POST", `/projects/${other}/webhooks`, { body })).status).toBe(201);
  const [first] = (await service.api("GET", `/projects/${full}/webhooks`)).body;
  expect((await service.api("DELETE", `/projects/${full}/webhooks/${first.id}`)).status).toBe(204);
  expect((await service.api("POST", `/projects/${full}/webhooks`, { body })).status).toBe(201);
});

it("holds under concurrent creates: exactly the limit is created", async () => {
  const raced = await project("raced");
  const statuses = await Promise.all(
    Array.from({ length: 12 }, () => service.api("POST", `/projects/${raced}/webhooks`, { body })),
  ).then((responses) => responses.map((response) => response.status));
  expect(statuses.filter((status) => status === 201)).toHaveLength(3);
  expect(statuses.filter((status) => status === 409)).toHaveLength(9);
  expect((await service.api("GET", `/projects/${raced}/webhooks`)).body).toHaveLength(3);
});
