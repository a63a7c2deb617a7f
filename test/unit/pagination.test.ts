import { describe, expect, it } from "vitest";
import { offsetOf } from "../../src/db/page.js";
import { listDeliveriesQuery } from "../../src/deliveries/schemas.js";
import { listDeploymentsQuery } from "../../src/deployments/schemas.js";
import { pageNumber, pageSize, perPageQuery } from "../../src/http/pagination.js";
import { listProjectsQuery } from "../../src/projects/schemas.js";
import { listWebhooksQuery } from "../../src/webhooks/schemas.js";

// Query values arrive as strings (express "simple" query parser); the schemas coerce and validate them.

function messages(result: { success: boolean; error?: { issues: { message: string }[] } }): string[] {
  expect(result.success).toBe(false);
  return result.error?.issues.map((issue) => issue.message) ?? [];
}

describe("pageNumber", () => {
  it.each([
    ["1", 1],
    ["2", 2],
    ["100000", 100_000],
    [String(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER],
    [3, 3],
  ])("accepts %j as page %i", (input, page) => {
    expect(pageNumber.parse(input)).toBe(page);
  });

  it.each(["0", "-1", "-0"])("rejects %j as below 1", (input) => {
    expect(messages(pageNumber.safeParse(input))).toContain("page must be 1 or greater");
  });

  it.each(["1.5", "abc", "NaN", "Infinity", "1e400", "1e2", "0x10", " 1", "+1", "", "   "])(
    "rejects %j: decimal digits only",
    (input) => {
      expect(messages(pageNumber.safeParse(input))).toContain(
        "page must be an integer (decimal digits only)",
      );
    },
  );

  it.each(["9007199254740993", "99999999999999999999"])("rejects %j as out of range", (input) => {
    expect(messages(pageNumber.safeParse(input))).toContain(
      `page must be at most ${Number.MAX_SAFE_INTEGER}`,
    );
  });
});

describe("perPageQuery (projects and deployments)", () => {
  it("is the query schema of both per_page lists (deployments add the opt-in include=workload)", () => {
    expect(listProjectsQuery).toBe(perPageQuery);
    expect(listDeploymentsQuery.shape.page).toBe(perPageQuery.shape.page);
    expect(listDeploymentsQuery.shape.per_page).toBe(perPageQuery.shape.per_page);
    expect(Object.keys(listDeploymentsQuery.shape)).toEqual(["page", "per_page", "include"]);
  });

  it("defaults to page 1 and per_page 10", () => {
    expect(perPageQuery.parse({})).toEqual({ page: 1, per_page: 10 });
  });

  it("coerces string values and drops unknown parameters", () => {
    expect(perPageQuery.parse({ page: "3", per_page: "25", page_size: "5", sort: "x" })).toEqual({
      page: 3,
      per_page: 25,
    });
  });

  it.each([
    ["1", 1],
    ["100", 100],
    ["50", 50],
  ])("accepts per_page %j", (input, perPage) => {
    expect(perPageQuery.parse({ per_page: input }).per_page).toBe(perPage);
  });

  it.each(["0", "101", "-1", "1000"])("rejects out-of-range per_page %j instead of clamping", (input) => {
    const result = perPageQuery.safeParse({ per_page: input });
    expect(messages(result)).toContain("per_page must be between 1 and 100");
    expect(result.error?.issues[0]?.path).toEqual(["per_page"]);
  });

  it.each(["1.5", "ten", "", " ", "Infinity"])("rejects non-integer per_page %j", (input) => {
    expect(messages(perPageQuery.safeParse({ per_page: input }))).toContain(
      "per_page must be an integer (decimal digits only)",
    );
  });

  it.each(["0", "-4", "1.5", "x", ""])("rejects page %j", (input) => {
    const result = perPageQuery.safeParse({ page: input });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["page"]);
  });

  it("reports both parameters when both are wrong", () => {
    const result = perPageQuery.safeParse({ page: "0", per_page: "500" });
    expect(result.error?.issues.map((issue) => issue.path[0]).sort()).toEqual(["page", "per_page"]);
  });
});

describe("pageSize (shared page_size lists)", () => {
  it.each([
    ["1", 1],
    ["20", 20],
    ["100", 100],
    ["0", 1],
    ["-5", 1],
    ["-1000000", 1],
    ["101", 100],
    ["500", 100],
    [String(Number.MAX_SAFE_INTEGER), 100],
    ["99999999999999999999", 100],
    ["-99999999999999999999", 1],
  ])("maps %j to %i (clamped to 1–100)", (input, size) => {
    expect(pageSize.parse(input)).toBe(size);
  });

  it.each(["1.5", "abc", "", "  ", "NaN", "-Infinity", "1e400", "1e2", "0x10"])(
    "rejects %j: decimal digits only",
    (input) => {
      expect(messages(pageSize.safeParse(input))).toContain(
        "page_size must be an integer (decimal digits only)",
      );
    },
  );
});

describe("listWebhooksQuery", () => {
  it("leaves both parameters undefined when neither is given (the bare-array form)", () => {
    const query = listWebhooksQuery.parse({});
    expect(query.page).toBeUndefined();
    expect(query.page_size).toBeUndefined();
  });

  it("parses page alone and page_size alone without inventing the other", () => {
    expect(listWebhooksQuery.parse({ page: "2" })).toEqual({ page: 2 });
    expect(listWebhooksQuery.parse({ page_size: "5" })).toEqual({ page_size: 5 });
  });

  it("clamps page_size but rejects a page below 1", () => {
    expect(listWebhooksQuery.parse({ page: "1", page_size: "0" })).toEqual({ page: 1, page_size: 1 });
    expect(listWebhooksQuery.parse({ page: "1", page_size: "500" })).toEqual({ page: 1, page_size: 100 });
    expect(messages(listWebhooksQuery.safeParse({ page: "0", page_size: "5" }))).toContain(
      "page must be 1 or greater",
    );
  });

  it.each(["2.5", "many", ""])("rejects non-integer page_size %j", (input) => {
    expect(messages(listWebhooksQuery.safeParse({ page_size: input }))).toContain(
      "page_size must be an integer (decimal digits only)",
    );
  });
});

describe("listDeliveriesQuery (endpoint 7 limit)", () => {
  it("defaults limit to 50", () => {
    expect(listDeliveriesQuery.parse({})).toEqual({ limit: 50 });
  });

  it.each([
    ["1", 1],
    ["50", 50],
    ["100", 100],
    ["0", 1],
    ["-3", 1],
    ["101", 100],
    ["1000", 100],
  ])("maps limit %j to %i (clamped to 1–100)", (input, limit) => {
    expect(listDeliveriesQuery.parse({ limit: input })).toEqual({ limit });
  });

  it.each(["1.5", "abc", "NaN", "Infinity", "1e400", "1e2", "0x10", " 42 ", ""])(
    "rejects non-integer limit %j",
    (input) => {
      const result = listDeliveriesQuery.safeParse({ limit: input });
      expect(messages(result)).toContain("limit must be an integer (decimal digits only)");
      expect(result.error?.issues[0]?.path).toEqual(["limit"]);
    },
  );
});

describe("offsetOf", () => {
  it.each([
    [1, 10, 0],
    [2, 10, 10],
    [3, 7, 14],
    [5, 1, 4],
    [4, 100, 300],
  ])("page %i of size %i starts at offset %i", (page, size, offset) => {
    expect(offsetOf({ page, size })).toBe(offset);
  });

  it("stays finite and within the Postgres bigint range for the largest accepted page", () => {
    const offset = offsetOf({ page: Number.MAX_SAFE_INTEGER, size: 100 });
    expect(Number.isFinite(offset)).toBe(true);
    expect(offset).toBeGreaterThan(2 ** 53);
    expect(offset).toBeLessThan(2 ** 63);
  });
});
