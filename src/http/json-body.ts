import express, { type RequestHandler } from "express";
import { malformedJson } from "./error-handler.js";

/**
 * Reads JSON bodies: an object or an array as always, and also `null`, which is valid JSON and what
 * generated clients send for an optional body they were given none for (routes read it as a body left
 * out, where the body is optional). Any other bare value (a string, a number, true) is still refused as
 * it was when the parser accepted only objects and arrays.
 */
export function jsonBody(limit: string): RequestHandler[] {
  return [
    express.json({ limit, strict: false }),
    (req, _res, next) => {
      const body: unknown = req.body;
      next(body !== undefined && body !== null && typeof body !== "object" ? malformedJson() : undefined);
    },
  ];
}
