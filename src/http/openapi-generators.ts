// The last touches to the generated document, made for the code generators that read it (the client
// suite, scripts/clients/, runs six of them against it). Each is a rule zod-to-openapi has no option for.

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
type Json = any;

/** 2^31 - 1: an integer schema allowed past it needs 64 bits. */
const int32Max = 2_147_483_647;

/**
 * Integers that may exceed 32 bits (ids, counts: zod's `.int()` publishes the safe-integer range) say
 * `format: int64`; without it Go and Java generators choose int32 and fail on the bound itself. Not a
 * clamped query parameter (`page_size`, `limit`): it takes any integer, however long, which a format
 * would bound.
 */
function markInt64(schema: Json): void {
  if (schema === null || typeof schema !== "object") return;
  if (Array.isArray(schema)) {
    for (const item of schema) markInt64(item);
    return;
  }
  if (schema.in === "query" && schema.schema?.maximum === undefined) return;
  const integer =
    schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer"));
  if (
    integer &&
    schema.format === undefined &&
    !(typeof schema.maximum === "number" && schema.maximum <= int32Max)
  ) {
    schema.format = "int64";
  }
  for (const value of Object.values(schema)) markInt64(value);
}

/**
 * A request body's optional fields carry no `default`: generators that see one make the field required
 * in the type they write (openapi-typescript) or send the default explicitly. Each field's description
 * says its default instead.
 */
function dropRequestDefaults(document: Json): void {
  const bodies: Json[] = [];
  for (const item of Object.values(document.paths ?? {}) as Json[]) {
    for (const operation of Object.values(item) as Json[]) {
      const schema = operation?.requestBody?.content?.["application/json"]?.schema;
      if (schema) bodies.push(schema);
    }
  }
  for (const body of bodies) {
    const ref: string | undefined = body.$ref;
    const schema = ref ? document.components.schemas[ref.replace("#/components/schemas/", "")] : body;
    for (const property of Object.values(schema?.properties ?? {}) as Json[]) delete property.default;
  }
}

export function forGenerators<D>(document: D): D {
  markInt64(document);
  dropRequestDefaults(document);
  return document;
}
