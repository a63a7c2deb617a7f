/**
 * A Postgres array literal, `{a,b,c}`, of items that need no quoting: numbers, uuids, booleans as
 * "t"/"f", dotted names, or null (written NULL). Hot paths pass arrays this way: joining is a fraction
 * of the work of node-postgres's general array serializer, which quotes and escapes every element.
 */
export function arrayLiteral(items: ReadonlyArray<number | string | null>): string {
  return `{${items.map((item) => item ?? "NULL").join(",")}}`;
}
