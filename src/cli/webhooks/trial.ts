import { type Command, Option } from "commander";
import { DeliveryFailedError, PreviewFailedError } from "../errors.js";
import { connect, projectIdOption, type WebhookRef, webhookIdOption } from "./options.js";
import { emit } from "./output.js";
import { attemptFields, previewDetails } from "./views.js";

// Trying a webhook before real events reach it: `test` sends an example event now, `preview` shows the
// request one would make and sends nothing.

export function registerTrialCommands(webhooks: Command): void {
  webhooks
    .command("test")
    .description("send an example event to the webhook now and print the outcome (exit 1 if it failed)")
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .addOption(new Option("--event-type <name>", "a deployment.* event type (default: deployment.succeeded)"))
    .action(async (options: WebhookRef & { eventType?: string }, command: Command) => {
      const { client, json } = connect(command);
      const result = await client.sendTestEvent(options.projectId, options.webhookId, options.eventType);
      emit(json, result, attemptFields);
      if (!result.success) throw new DeliveryFailedError(result.error_message);
    });

  webhooks
    .command("preview")
    .description(
      "show the request a delivery of an example event would make, headers and body; sends nothing (exit 1 if the format cannot render it)",
    )
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .addOption(new Option("--event-type <name>", "a deployment.* event type (default: deployment.succeeded)"))
    .action(async (options: WebhookRef & { eventType?: string }, command: Command) => {
      const { client, json } = connect(command);
      const preview = await client.previewWebhook(options.projectId, options.webhookId, options.eventType);
      emit(json, preview, previewDetails);
      if (preview.error !== undefined) throw new PreviewFailedError(preview.error);
    });
}
