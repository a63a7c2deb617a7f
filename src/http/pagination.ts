import { z } from "./openapi.js";

// Paging (docs/api.md, "Pagination"). Two families of page-based lists:
//  - per_page lists (projects, deployments): per_page 1–100, default 10, 400 outside the bounds;
//  - page_size lists (webhooks and the shared lists): page_size default 20, clamped to 1–100.
// page starts at 1 everywhere; a page below 1 or a non-integer is a 400. The deliveries list's
// `limit` (default 50) is clamped to 1–100 like page_size.

const decimalInteger = /^-?\d+$/;

/**
 * An integer query parameter. Query values are text, and only decimal digits (with an optional minus)
 * count: a blank value, "1.5", "1e2" or "0x10" is a 400 rather than a number JavaScript would read into
 * it. The number may be of any size here; each parameter then bounds or clamps it.
 */
function queryInteger(name: string) {
  return z.preprocess(
    (value) => (typeof value === "string" && decimalInteger.test(value) ? Number(value) : value),
    z
      .number({ error: `${name} must be an integer (decimal digits only)` })
      .refine(Number.isInteger, `${name} must be an integer (decimal digits only)`),
  );
}

/** Clamped, not refused (as docs/api.md says): even a 20-digit value is read as the bound it exceeds. */
function clampedQueryInteger(name: string, min: number, max: number) {
  return queryInteger(name)
    .transform((value) => Math.min(max, Math.max(min, value)))
    .openapi({ type: "integer" });
}

function boundedQueryInteger(name: string, min: number, max: number, messages: [string, string]) {
  return queryInteger(name)
    .pipe(z.number().min(min, messages[0]).max(max, messages[1]))
    .openapi({ type: "integer", minimum: min, maximum: max });
}

export const pageNumber = boundedQueryInteger("page", 1, Number.MAX_SAFE_INTEGER, [
  "page must be 1 or greater",
  `page must be at most ${Number.MAX_SAFE_INTEGER}`,
]).openapi({ description: "Page number, starting at 1", example: 1 });

export const perPageQuery = z.object({
  page: pageNumber.default(1),
  per_page: boundedQueryInteger("per_page", 1, 100, [
    "per_page must be between 1 and 100",
    "per_page must be between 1 and 100",
  ])
    .default(10)
    .openapi({ description: "Items per page, 1–100 (400 outside)", example: 10 }),
});

export const pageSize = clampedQueryInteger("page_size", 1, 100).openapi({
  description: "Items per page; any integer, clamped to 1–100",
  example: 20,
});

export const deliveryLimit = clampedQueryInteger("limit", 1, 100).default(50).openapi({
  description: "How many deliveries, newest first; default 50; any integer, clamped to 1–100",
  example: 50,
});
