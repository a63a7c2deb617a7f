import type { Queryable } from "./pool.js";

export interface PageRequest {
  page: number;
  size: number;
}

export function offsetOf(request: PageRequest): number {
  return (request.page - 1) * request.size;
}

/** How many times a page that came back empty is read while rows are being added. */
const maxReads = 3;

/**
 * One page of rows and the total it belongs to, read in ONE statement (`count(*) OVER ()` is computed
 * before LIMIT), so page and total always come from the same snapshot: two statements could see
 * different tables under concurrent writes. A page past the end has no row to carry the total, and is
 * counted separately.
 *
 * `from` is everything after FROM up to (not including) ORDER BY: a table and its WHERE, using
 * parameters `params` ($1 … $n); LIMIT and OFFSET are appended as $n+1 and $n+2.
 */
export async function selectPage<T extends object>(
  db: Queryable,
  query: { columns: string; from: string; orderBy: string; params: unknown[] },
  page: PageRequest,
): Promise<{ rows: T[]; total: number }> {
  const limit = `$${query.params.length + 1}`;
  const offset = `$${query.params.length + 2}`;
  for (let attempt = 1; ; attempt++) {
    const { rows } = await db.query<T & { page_total: number }>(
      `SELECT ${query.columns}, count(*) OVER ()::int AS page_total FROM ${query.from}
        ORDER BY ${query.orderBy} LIMIT ${limit} OFFSET ${offset}`,
      [...query.params, page.size, offsetOf(page)],
    );
    if (rows.length > 0) {
      const total = rows[0]?.page_total ?? 0;
      return { rows: rows.map(({ page_total: _, ...row }) => row as unknown as T), total };
    }
    const counted = await db.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM ${query.from}`,
      query.params,
    );
    const total = counted.rows[0]?.total ?? 0;
    // Rows added between the two statements can put the count past the page's start, which the empty
    // page contradicts: read the page again (a few times at most), so that an empty page comes with a
    // total that ends before it.
    if (total <= offsetOf(page) || attempt === maxReads) return { rows: [], total };
  }
}
