import { z } from "./openapi.js";

// Building blocks shared by every feature's schemas.

export const idParam = (name: string) =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int(`${name} must be a positive integer`)
    .min(1, `${name} must be a positive integer`)
    .max(Number.MAX_SAFE_INTEGER, `${name} is out of range`)
    .openapi({ param: { name, in: "path" }, type: "integer", example: 1 });

export const projectParams = z.object({ project_id: idParam("project_id") });

export const httpUrl = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .max(2048, `${field} must be at most 2048 characters`)
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
      } catch {
        return false;
      }
    }, `${field} must be an absolute http:// or https:// URL`);

export const isoTimestamp = z.string().openapi({ format: "date-time", example: "2026-11-21T05:29:33.123Z" });

/** Timestamps leave the API as ISO 8601 UTC with milliseconds. */
export function iso(date: Date): string;
export function iso(date: Date | null): string | null;
export function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
