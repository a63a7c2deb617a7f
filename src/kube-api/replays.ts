import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Pool } from "../db/pool.js";
import { replayDelivery } from "../deliveries/replay.js";
import type { DeliveryEngine } from "../delivery-engine/engine.js";
import { findWebhook } from "../webhooks/store.js";
import { maskUrlIn } from "../webhooks/url-secret.js";
import { findAttempt } from "./delivery-store.js";
import { sendJson } from "./read-handlers.js";
import { groupVersion } from "./resources.js";
import { KubeStatusError } from "./status.js";

export interface ReplayCreator {
  create(
    request: IncomingMessage,
    response: ServerResponse,
    namespace: string,
    query: URLSearchParams,
  ): Promise<void>;
}

const maxBodyBytes = 16 * 1024;

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes)
      throw new KubeStatusError("RequestEntityTooLarge", `a DeliveryReplay is at most ${maxBodyBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new KubeStatusError("BadRequest", "the body is not a JSON object (kubectl sends one)");
  }
}

interface ReplayRequest {
  metadata?: { name?: unknown; generateName?: unknown };
  spec?: { delivery?: unknown };
}

/** The delivery named by `spec.delivery` (its id, as `kubectl get deliveries` lists it). */
function deliveryIdOf(body: ReplayRequest): number {
  const named = body?.spec?.delivery;
  const text = typeof named === "number" ? String(named) : named;
  if (typeof text !== "string" || !/^\d{1,15}$/.test(text)) {
    throw new KubeStatusError(
      "Invalid",
      'DeliveryReplay.spec.delivery: Required value: the name of a delivery (its id), e.g. "1234"',
    );
  }
  return Number(text);
}

function nameOf(body: ReplayRequest): string {
  const { name, generateName } = body?.metadata ?? {};
  if (typeof name === "string" && name !== "") return name;
  const prefix = typeof generateName === "string" && generateName !== "" ? generateName : "replay-";
  return `${prefix}${randomBytes(3).toString("hex").slice(0, 5)}`;
}

/**
 * `kubectl create -f replay.yaml`: sends a recorded delivery again, once per create, as /api's retry
 * does (a new attempt of the same event, sent now, recorded before the answer). Nothing is stored under
 * the replay's name: the new attempt is the record, and the API server's audit log says who asked.
 * A server-side dry run (`--dry-run=server`) checks the request and sends nothing.
 */
export function replayCreator(pool: Pool, engine: DeliveryEngine): ReplayCreator {
  return {
    async create(request, response, namespace, query) {
      const body = (await readBody(request)) as ReplayRequest;
      const deliveryId = deliveryIdOf(body);
      const attempt = await findAttempt(pool, namespace, deliveryId);
      const webhook = attempt && (await findWebhook(pool, attempt.project_id, attempt.webhook_id));
      if (!attempt || !webhook) {
        throw new KubeStatusError(
          "NotFound",
          `deliveries.${groupVersion.split("/")[0]} "${deliveryId}" not found`,
        );
      }
      const metadata = {
        name: nameOf(body),
        namespace,
        creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
      };
      const spec = { delivery: String(deliveryId) };
      if (query.getAll("dryRun").includes("All")) {
        sendJson(response, 201, {
          apiVersion: groupVersion,
          kind: "DeliveryReplay",
          metadata,
          spec,
          status: {},
        });
        return;
      }
      const result = await replayDelivery(pool, engine, webhook, deliveryId);
      const message = maskUrlIn(result.error_message, webhook);
      sendJson(response, 201, {
        apiVersion: groupVersion,
        kind: "DeliveryReplay",
        metadata,
        spec,
        status: {
          delivery: String(result.delivery_id),
          outcome: result.success ? "succeeded" : "failed",
          statusCode: result.status_code,
          attempt: result.attempt_number,
          ...(message ? { message } : {}),
        },
      });
    },
  };
}
