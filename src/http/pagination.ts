import { z } from "./openapi.js";

// Spec §4.2. Two families of page-based lists:
//  - per_page lists (projects, deployments): per_page 1–100, default 10, 400 outside the bounds;
//  - page_size lists (webhooks and the shared lists): page_size default 20, clamped to 1–100.
// page starts at 1 everywhere; a page below 1 or a non-integer is a 400.

// Number("") is 0: a blank value (`?page_size=`) is not an integer and must not pass as 0 (clamped to 1).
const blankAsNaN = (value: unknown) =>
  typeof value === "string" && value.trim() === "" ? Number.NaN : value;

export const pageNumber = z
  .preprocess(
    blankAsNaN,
    z.coerce
      .number({ error: "page must be an integer" })
      .int("page must be an integer")
      .min(1, "page must be 1 or greater"),
  )
  .openapi({ description: "Page number, starting at 1", example: 1 });

export const perPageQuery = z.object({
  page: pageNumber.default(1),
  per_page: z
    .preprocess(
      blankAsNaN,
      z.coerce
        .number({ error: "per_page must be an integer" })
        .int("per_page must be an integer")
        .min(1, "per_page must be between 1 and 100")
        .max(100, "per_page must be between 1 and 100"),
    )
    .default(10)
    .openapi({ description: "Items per page, 1–100 (400 outside)", example: 10 }),
});

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

export const pageSize = z
  .preprocess(
    blankAsNaN,
    z.coerce.number({ error: "page_size must be an integer" }).int("page_size must be an integer"),
  )
  .transform((value) => clamp(value, 1, 100))
  .openapi({ description: "Items per page; clamped to 1–100", example: 20 });

export interface PageRequest {
  page: number;
  size: number;
}

export function offsetOf(request: PageRequest): number {
  return (request.page - 1) * request.size;
}
