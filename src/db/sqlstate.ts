import pg from "pg";

// SQLSTATE codes we act on, in one table: callers ask what an error means, never match its text.
const sqlstates = {
  uniqueViolation: "23505",
  foreignKeyViolation: "23503",
  duplicateTable: "42P07",
  duplicateObject: "42710",
  // Transient: the operation may succeed if tried again.
  serializationFailure: "40001",
  deadlockDetected: "40P01",
  adminShutdown: "57P01",
  cannotConnectNow: "57P03",
  connectionFailure: "08006",
  connectionDoesNotExist: "08003",
} as const;

const transient = new Set<string>([
  sqlstates.serializationFailure,
  sqlstates.deadlockDetected,
  sqlstates.adminShutdown,
  sqlstates.cannotConnectNow,
  sqlstates.connectionFailure,
  sqlstates.connectionDoesNotExist,
]);

function codeOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  return codeOf(error) === sqlstates.uniqueViolation;
}

/** CREATE … IF NOT EXISTS racing another session: the table, or its row type, appeared meanwhile. */
export function isAlreadyCreated(error: unknown): boolean {
  const code = codeOf(error);
  return (
    code === sqlstates.duplicateTable ||
    code === sqlstates.duplicateObject ||
    code === sqlstates.uniqueViolation
  );
}

/**
 * Whether trying again may succeed: a transient SQLSTATE, or no answer from the server at all. Errors
 * the server reported are pg DatabaseErrors (they carry a SQLSTATE); anything else from a query is the
 * connection failing, refused or dropped ("Connection terminated unexpectedly" has no code at all).
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return true;
  const code = codeOf(error);
  return code !== undefined && transient.has(code);
}
