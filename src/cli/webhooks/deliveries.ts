import { type Command, Option } from "commander";
import { DeliveryFailedError, usageError } from "../errors.js";
import {
  connect,
  type DeliveryRef,
  deliveryIdOption,
  pointInTime,
  positiveInteger,
  projectIdOption,
  type WebhookRef,
  webhookIdOption,
} from "./options.js";
import { emit } from "./output.js";
import { attemptFields, deliveryDetails, deliveryTable, recoverSummary } from "./views.js";

/** `webhooks deliveries …`: the delivery records of one webhook (endpoints 7–9). */
export function registerDeliveryCommands(webhooks: Command): void {
  const deliveries = webhooks.command("deliveries").description("inspect and retry a webhook's deliveries");

  deliveries
    .command("list")
    .description("list delivery attempts, newest first")
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .addOption(
      new Option("--limit <n>", "how many per page, newest first (default: 50, at most 100)").argParser(
        positiveInteger,
      ),
    )
    .addOption(new Option("--failed", "only failed attempts"))
    .addOption(new Option("--event-type <name>", "only attempts of this event type"))
    .addOption(new Option("--all", "every attempt: follow the pages (Link rel=next) to the oldest"))
    .action(async (options: ListOptions, command: Command) => {
      const { client, json } = connect(command);
      const filter = {
        limit: options.limit ?? (options.all ? 100 : undefined),
        success: options.failed ? false : undefined,
        eventType: options.eventType,
      };
      const list = [];
      let page = await client.listDeliveriesPage(options.projectId, options.webhookId, filter);
      list.push(...page.deliveries);
      while (options.all && page.next) {
        page = await client.listDeliveriesPage(options.projectId, options.webhookId, filter, page.next);
        list.push(...page.deliveries);
      }
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
    .command("recover")
    .description(
      "queue a new attempt of every event whose latest attempt failed since a time; the service sends them",
    )
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .addOption(
      new Option("--since <when>", "failures since: a duration back from now (30m, 2h, 7d) or an ISO time")
        .argParser(pointInTime)
        .makeOptionMandatory(),
    )
    .addOption(new Option("--until <when>", "… and before (default: now)").argParser(pointInTime))
    .addOption(new Option("--event-type <name>", "only events of this type"))
    .action(async (options: RecoverOptions, command: Command) => {
      // The API takes an empty window and queues nothing; on the command line it is a typo worth saying.
      if (options.until !== undefined && options.until <= options.since) {
        usageError(command, `--until (${options.until}) must be later than --since (${options.since})`);
      }
      const { client, json } = connect(command);
      const result = await client.recoverDeliveries(options.projectId, options.webhookId, options);
      emit(json, result, recoverSummary);
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

interface ListOptions extends WebhookRef {
  limit?: number;
  failed?: boolean;
  eventType?: string;
  all?: boolean;
}

interface RecoverOptions extends WebhookRef {
  since: string;
  until?: string;
  eventType?: string;
}
