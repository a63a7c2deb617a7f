import { type Command, InvalidArgumentError, Option } from "commander";
import type { ExampleWorkload } from "../../client/api-client.js";
import { DeliveryFailedError, PreviewFailedError } from "../errors.js";
import { connect, projectIdOption, type WebhookRef, webhookIdOption } from "./options.js";
import { emit } from "./output.js";
import { attemptFields, filterCheckFields, previewDetails } from "./views.js";

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
      "show the request a delivery of an example event would make, headers and body; sends nothing (exit 1 if the format cannot render it). With --kind, --labels or --environment it first says whether the webhook would get the event of that workload, and why not",
    )
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .addOption(new Option("--event-type <name>", "a deployment.* event type (default: deployment.succeeded)"))
    .addOption(
      new Option("--kind <kind>", "an example workload's kind, checked against the webhook's filters"),
    )
    .addOption(
      new Option("--labels <labels>", "an example workload's labels, key=value,key=value").argParser(
        labelsOption,
      ),
    )
    .addOption(new Option("--environment <name>", "an example rollout's environment"))
    .action(async (options: PreviewOptions, command: Command) => {
      const { client, json } = connect(command);
      const { projectId, webhookId, eventType } = options;
      const workload = workloadOf(options);
      const check = workload && (await client.checkWebhookFilters(projectId, webhookId, workload, eventType));
      const preview = await client.previewWebhook(projectId, webhookId, eventType);
      if (check) {
        emit(json, { filter_check: check, preview }, (both) =>
          [filterCheckFields(both.filter_check), previewDetails(both.preview)].join("\n"),
        );
      } else {
        emit(json, preview, previewDetails);
      }
      if (preview.error !== undefined) throw new PreviewFailedError(preview.error);
    });
}

interface PreviewOptions extends WebhookRef {
  eventType?: string;
  kind?: string;
  labels?: Record<string, string>;
  environment?: string;
}

/** `app=payments,tier=web`; a term without `=` is a usage error. The server checks the values. */
function labelsOption(value: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const term of value.split(",").filter((item) => item.trim() !== "")) {
    const equals = term.indexOf("=");
    if (equals <= 0) throw new InvalidArgumentError(`"${term}" is not key=value.`);
    labels[term.slice(0, equals).trim()] = term.slice(equals + 1).trim();
  }
  return labels;
}

/** The example workload of the options given; undefined when none was (no check then). */
function workloadOf(options: PreviewOptions): ExampleWorkload | undefined {
  const { kind, labels, environment } = options;
  if (kind === undefined && labels === undefined && environment === undefined) return undefined;
  return {
    ...(kind === undefined ? {} : { kind }),
    ...(labels === undefined ? {} : { labels }),
    ...(environment === undefined ? {} : { environment }),
  };
}
