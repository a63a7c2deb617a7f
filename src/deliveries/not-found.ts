import { NotFoundError } from "../errors.js";

/** A delivery id that is not (or no longer) there: it may have been removed by retention. */
export const deliveryNotFound = (deliveryId: number, webhookId: number): NotFoundError =>
  new NotFoundError(
    `Delivery ${deliveryId} not found for webhook ${webhookId}. Delivery records older than the retention period (RETENTION_DAYS) are removed.`,
  );
