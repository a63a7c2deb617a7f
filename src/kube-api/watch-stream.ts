import type { ServerResponse } from "node:http";
import type { Logger } from "../logger.js";
import type { WatchCursor } from "./backend.js";
import { watchTurnMs } from "./delivery-watch.js";
import { KubeStatusError } from "./status.js";

/**
 * A watch response: one JSON event per line (`{"type":"ADDED","object":…}`), a turn every second,
 * until the client goes, `timeoutSeconds` pass, or a turn fails (then an ERROR event with a Status,
 * and the client watches again, as client-go and kubectl do).
 */
export async function streamWatch<Row>(
  response: ServerResponse,
  cursor: WatchCursor<Row>,
  options: { toObject(row: Row): unknown; timeoutMs: number | undefined; logger: Logger },
): Promise<void> {
  response.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
  response.flushHeaders();
  let open = true;
  const end = () => {
    open = false;
  };
  response.on("close", end);
  const deadline =
    options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  try {
    while (open && Date.now() < deadline) {
      for (const { type, row } of await cursor.next()) {
        if (!open) break;
        response.write(`${JSON.stringify({ type, object: options.toObject(row) })}\n`);
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(watchTurnMs, Math.max(0, deadline - Date.now()))),
      );
    }
  } catch (error) {
    options.logger.warn({ err: error }, "aggregated API: a watch turn failed; the watch ends");
    const status = new KubeStatusError(
      "InternalError",
      "the watch could not read the deliveries; watch again",
    ).toStatus();
    if (open) response.write(`${JSON.stringify({ type: "ERROR", object: status })}\n`);
  } finally {
    response.off("close", end);
    response.end();
  }
}
