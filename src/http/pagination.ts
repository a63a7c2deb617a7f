import { z } from "./openapi.js";

// Spec §4.2. Two families of page-based lists:
//  - per_page lists (projects, deployments): per_page 1–100, default 10, 400 outside the bounds;
//  - page_size lists (webhooks and the shared lists): page_size default 20, clamped to 1–100.
// page starts at 1 everywhere; a page below 1 or a non-integer is a 400. The deliveries list's
// `limit` (default 50) is clamped to 1–100 like page_size.

const decimalInteger = /^-?\d+$/;

/**
 * An integer query parameter. Query values are text, and only digits (with an optional minus) count:
 * a blank value, "1.5", "1e2" or "0x10" is a 400 rather than a number JavaScript would read into it.
 */
export function queryInteger(name: string) {
  return z.preprocess(
    (value) => (typeof value === "string" && !decimalInteger.test(value) ? Number.NaN : value),
    z.coerce.number({ error: `${name} must be an integer` }).int(`${name} must be an integer`),
  );
}

const clamp = (min: number, max: number) => (value: number) => Math.min(max, Math.max(min, value));

export const pageNumber = queryInteger("page")
  .pipe(z.number().min(1, "page must be 1 or greater"))
  .openapi({ description: "Page number, starting at 1", example: 1 });

export const perPageQuery = z.object({
  page: pageNumber.default(1),
  per_page: queryInteger("per_page")
    .pipe(
      z.number().min(1, "per_page must be between 1 and 100").max(100, "per_page must be between 1 and 100"),
    )
    .default(10)
    .openapi({ description: "Items per page, 1–100 (400 outside)", example: 10 }),
});

export const pageSize = queryInteger("page_size")
  .transform(clamp(1, 100))
  .openapi({ description: "Items per page; clamped to 1–100", example: 20 });

export const deliveryLimit = queryInteger("limit")
  .transform(clamp(1, 100))
  .default(50)
  .openapi({ description: "How many deliveries, newest first; default 50, clamped to 1–100", example: 50 });
