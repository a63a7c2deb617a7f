import type { AxiosError } from "axios";

// What axios's own isAxiosError checks; written out so that this module (imported by every CLI
// command, `serve` included) does not load axios.
const isAxiosError = (error: unknown): error is AxiosError =>
  typeof error === "object" && error !== null && (error as { isAxiosError?: unknown }).isAxiosError === true;

/** One problem with a request field, as the server's validation error lists it. */
export interface FieldProblem {
  path: string;
  message: string;
}

/** The API answered with an error status; status, code and message are the server's own. */
export class ApiClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: FieldProblem[],
  ) {
    super(message);
    this.name = "ApiClientError";
  }
}

/** No HTTP answer at all (refused, unknown host, timeout): names the address that was tried. */
export class ApiNetworkError extends Error {
  constructor(
    readonly baseUrl: string,
    readonly reason: string,
  ) {
    super(`Could not reach the API at ${baseUrl}: ${reason}.`);
    this.name = "ApiNetworkError";
  }
}

// Socket error codes worth a plain-words explanation; anything else is reported by its own message.
const networkReasons: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  EHOSTUNREACH: "host unreachable",
  ECONNABORTED: "no answer in time",
  ETIMEDOUT: "no answer in time",
};

interface ServerErrorBody {
  error: { code: string; message: string; details?: FieldProblem[] };
}

function isServerErrorBody(data: unknown): data is ServerErrorBody {
  if (typeof data !== "object" || data === null || !("error" in data)) return false;
  const { error } = data as { error: unknown };
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string"
  );
}

/**
 * Turns what axios throws into ApiClientError (an HTTP answer) or ApiNetworkError (none). An answer
 * without the service's error body (a proxy's HTML page, say) keeps its status and reason phrase.
 */
export function toClientError(error: unknown, baseUrl: string): Error {
  if (!isAxiosError(error)) return error instanceof Error ? error : new Error(String(error));
  const { response } = error;
  if (response) {
    if (isServerErrorBody(response.data)) {
      const { code, message, details } = response.data.error;
      return new ApiClientError(response.status, code, message, details);
    }
    const reason = response.statusText ? ` ${response.statusText}` : "";
    return new ApiClientError(
      response.status,
      "http_error",
      `HTTP ${response.status}${reason} from ${baseUrl}`,
    );
  }
  const code = error.code ?? "";
  const reason = networkReasons[code] ?? (error.message || code || "network error");
  return new ApiNetworkError(baseUrl, code && networkReasons[code] ? `${reason} (${code})` : reason);
}
