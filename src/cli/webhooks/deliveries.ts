import { type Command, Option } from "commander";
import { DeliveryFailedError } from "../errors.js";
import {
  connect,
  type DeliveryRef,
  deliveryIdOption,
  positiveInteger,
  projectIdOption,
  type WebhookRef,
  webhookIdOption,
} from "./options.js";
import { emit } from "./output.js";
import { attemptFields, deliveryDetails, deliveryTable } from "./views.js";

/** `webhooks deliveries …`: the delivery records of one webhook (endpoints 7–9). */
export function registerDeliveryCommands(webhooks: Command): void {
  const deliveries = webhooks.command("deliveries").description("inspect and retry a webhook's deliveries");

  deliveries
    .command("list")
    .description("list delivery attempts, newest first")
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .addOption(
      new Option("--limit <n>", "how many, newest first (default: 50, at most 100)").argParser(
        positiveInteger,
      ),
    )
    .action(async (options: WebhookRef & { limit?: number }, command: Command) => {
      const { client, json } = connect(command);
      const list = await client.listDeliveries(options.projectId, options.webhookId, {
        ...(options.limit === undefined ? {} : { limit: options.limit }),
      });
      emit(json, list, deliveryTable);
    });

  deliveries
    .command("show")
    .description("show one delivery attempt with its full payload")
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .addOption(deliveryIdOption())
    .action(async (options: DeliveryRef, command: Command) => {
      const { client, json } = connect(command);
      const delivery = await client.getDelivery(options.projectId, options.webhookId, options.deliveryId);
      emit(json, delivery, deliveryDetails);
    });

  deliveries
    .command("retry")
    .description("re-send a delivery's event now and print the outcome (exit 1 if it failed)")
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .addOption(deliveryIdOption())
    .action(async (options: DeliveryRef, command: Command) => {
      const { client, json } = connect(command);
      const result = await client.retryDelivery(options.projectId, options.webhookId, options.deliveryId);
      emit(json, result, attemptFields);
      if (!result.success) throw new DeliveryFailedError(result.error_message);
    });
}
