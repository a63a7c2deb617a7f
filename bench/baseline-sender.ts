import { type AxiosInstance, isAxiosError } from "axios";
import { deliveryHeaders } from "../src/delivery-engine/delivery-headers.js";
import {
  connectionFailedMessage,
  type DeliveryOutcome,
  httpErrorMessage,
  signPayload,
  timeoutMessage,
} from "../src/delivery-engine/sender.js";

const responseBodyLimit = 4_096;

/** One delivery as a pg-boss job carries it (baseline-system.ts). */
export interface DeliveryJob {
  deliveryId: number;
  url: string;
  secret: string | null;
  eventType: string;
  body: string;
}

/** POSTs one delivery with axios: the engine's headers and signature, the engine's outcome shape. */
export async function postWithAxios(
  http: AxiosInstance,
  job: DeliveryJob,
): Promise<DeliveryOutcome & { deliveredAt: Date }> {
  const started = performance.now();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = job.secret === null ? null : signPayload(job.secret, timestamp, job.body);
  const headers = deliveryHeaders({
    eventType: job.eventType,
    deliveryId: job.deliveryId,
    timestamp,
    signature,
  });
  headers["User-Agent"] = "webhook-operator";
  const finish = (
    statusCode: number,
    responseBody: string,
    failure: DeliveryOutcome["failure"],
    message: string | null,
  ) => ({
    success: failure === null,
    statusCode,
    responseBody,
    errorMessage: message,
    failure,
    durationMs: Math.round(performance.now() - started),
    requestTimestamp: Number(timestamp),
    signature,
    deliveredAt: new Date(),
  });
  try {
    const response = await http.post<string>(job.url, job.body, { headers });
    const body = String(response.data ?? "").slice(0, responseBodyLimit);
    if (response.status >= 200 && response.status <= 299) return finish(response.status, body, null, null);
    return finish(response.status, body, "http", httpErrorMessage(job.url, response.status));
  } catch (error) {
    if (isAxiosError(error) && error.code === "ECONNABORTED") {
      return finish(0, "", "timeout", timeoutMessage(job.url, 30_000));
    }
    return finish(0, "", "connection", connectionFailedMessage(job.url));
  }
}
