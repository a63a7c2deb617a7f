import type { Command } from "commander";
import { usageError } from "../errors.js";
import { registerDeliveryCommands } from "./deliveries.js";
import { addFilterOptions, type FilterOptions, filterFields } from "./filter-options.js";
import { addFormatOptions, type FormatOptions, formatFields } from "./format-options.js";
import {
  addGroupOptions,
  connect,
  enabledOption,
  eventsOption,
  policyOptions,
  projectIdOption,
  type WebhookRef,
  webhookIdOption,
} from "./options.js";
import { emit } from "./output.js";
import { addSecretOptions, resolveSecret, type SecretOptions } from "./secret.js";
import { registerTrialCommands } from "./trial.js";
import { eventTypeTable, webhookFields, webhookTable } from "./views.js";

interface PolicyOptions {
  retryMaxAttempts?: number | "off";
  autoDisable?: { after_failures: number; min_duration_seconds: number } | "off";
  rateLimit?: { per_second: number; burst: number } | "off";
}

interface CreateOptions extends SecretOptions, PolicyOptions, FormatOptions, FilterOptions {
  projectId: number;
  url: string;
  urlSecret?: boolean;
  events: string[];
  enabled?: boolean;
}

interface UpdateOptions extends WebhookRef, SecretOptions, PolicyOptions, FormatOptions, FilterOptions {
  url?: string;
  urlSecret?: boolean;
  events?: string[];
  enabled?: boolean;
}

/** The API's policy fields for the options given (none for options left out). */
function policyFields(options: PolicyOptions) {
  return {
    ...(options.retryMaxAttempts === undefined
      ? {}
      : {
          retry_policy:
            options.retryMaxAttempts === "off" ? null : { max_attempts: options.retryMaxAttempts },
        }),
    ...(options.autoDisable === undefined
      ? {}
      : { auto_disable: options.autoDisable === "off" ? null : options.autoDisable }),
    ...(options.rateLimit === undefined
      ? {}
      : { rate_limit: options.rateLimit === "off" ? null : options.rateLimit }),
  };
}

/** `webhooks` (alias `hooks`): the webhooks command group (docs/cli.md), calling /api through the typed client. */
export function registerWebhookCommands(program: Command): void {
  const webhooks = addGroupOptions(
    program
      .command("webhooks")
      .alias("hooks")
      .description("manage project webhooks and their deliveries through the API"),
  );

  addSecretOptions(
    policyOptions(
      addFormatOptions(
        addFilterOptions(
          webhooks
            .command("create")
            .description("create a webhook")
            .addOption(projectIdOption())
            .requiredOption("--url <url>", "receiver address (http:// or https://)")
            .option(
              "--url-secret",
              "the URL is a secret (a chat service's): never shown again, only scheme://host/********",
            )
            .addOption(eventsOption("events to subscribe to").makeOptionMandatory())
            .addOption(enabledOption("whether deliveries are made (default: true)")),
          { forUpdate: false },
        ),
        { forUpdate: false },
      ),
    ),
    { forUpdate: false },
  ).action(async (options: CreateOptions, command: Command) => {
    // Checked before the request, so the message names the flag rather than the API's field.
    if (options.format === "template" && options.templateFile === undefined) {
      usageError(command, "--format template needs --template-file <path>, the Liquid template of the body");
    }
    const { client, json } = connect(command);
    const secret = await resolveSecret(command, options, { readEnv: true });
    const webhook = await client.createWebhook(options.projectId, {
      url: options.url,
      ...(options.urlSecret ? { url_secret: true } : {}),
      events: options.events,
      ...(options.enabled === undefined ? {} : { enabled: options.enabled }),
      ...(secret === undefined ? {} : { secret }),
      ...policyFields(options),
      ...(await formatFields(command, options)),
      ...filterFields(options),
    });
    emit(json, webhook, webhookFields);
  });

  webhooks
    .command("list")
    .description("list a project's webhooks, newest first")
    .addOption(projectIdOption())
    .action(async (options: { projectId: number }, command: Command) => {
      const { client, json } = connect(command);
      emit(json, await client.listWebhooks(options.projectId), webhookTable);
    });

  webhooks
    .command("show")
    .description("show one webhook")
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .action(async (options: WebhookRef, command: Command) => {
      const { client, json } = connect(command);
      emit(json, await client.getWebhook(options.projectId, options.webhookId), webhookFields);
    });

  addSecretOptions(
    policyOptions(
      addFormatOptions(
        addFilterOptions(
          webhooks
            .command("update")
            .description("change a webhook; options left out keep their values")
            .addOption(projectIdOption())
            .addOption(webhookIdOption())
            .option("--url <url>", "new receiver address")
            .option(
              "--url-secret",
              "from now on show the URL only as scheme://host/******** (turned off only through the API, with a new URL)",
            )
            .addOption(eventsOption("new subscription, replacing the old one"))
            .addOption(enabledOption("turn deliveries on or off (true also clears an automatic disable)")),
          { forUpdate: true },
        ),
        { forUpdate: true },
      ),
    ),
    { forUpdate: true },
  ).action(async (options: UpdateOptions, command: Command) => {
    const { client, json } = connect(command);
    const secret = await resolveSecret(command, options, { readEnv: false });
    const changes = {
      ...(options.url === undefined ? {} : { url: options.url }),
      ...(options.urlSecret ? { url_secret: true } : {}),
      ...(options.events === undefined ? {} : { events: options.events }),
      ...(options.enabled === undefined ? {} : { enabled: options.enabled }),
      ...(secret === undefined ? {} : { secret }),
      ...policyFields(options),
      ...(await formatFields(command, options)),
      ...filterFields(options),
    };
    if (Object.keys(changes).length === 0) {
      usageError(
        command,
        "nothing to update: give --url, --url-secret, --events, --enabled, --secret, --secret-stdin, --remove-secret, --retry-max-attempts, --auto-disable, --rate-limit, --format, --cloudevents-mode, --signature-scheme, --template-file, --template-content-type, --header, --remove-headers, --rollout-details, --no-rollout-details, --selector, --environment, --kind or --remove-filters",
      );
    }
    emit(json, await client.updateWebhook(options.projectId, options.webhookId, changes), webhookFields);
  });

  for (const [name, enabled] of [
    ["enable", true],
    ["disable", false],
  ] as const) {
    webhooks
      .command(name)
      .description(
        enabled
          ? "resume deliveries to a webhook (also after an automatic disable)"
          : "stop deliveries to a webhook",
      )
      .addOption(projectIdOption())
      .addOption(webhookIdOption())
      .action(async (options: WebhookRef, command: Command) => {
        const { client, json } = connect(command);
        const webhook = await client.updateWebhook(options.projectId, options.webhookId, { enabled });
        emit(json, webhook, webhookFields);
      });
  }

  webhooks
    .command("remove")
    .description("delete a webhook and its delivery records (prints nothing with --json)")
    .addOption(projectIdOption())
    .addOption(webhookIdOption())
    .action(async (options: WebhookRef, command: Command) => {
      const { client, json } = connect(command);
      await client.deleteWebhook(options.projectId, options.webhookId);
      // The API answers 204 with no body: --json has nothing to print, and the exit code tells.
      if (!json)
        process.stdout.write(`Removed webhook ${options.webhookId} of project ${options.projectId}.\n`);
    });

  webhooks
    .command("events")
    .description("list the event types a webhook can subscribe to")
    .action(async (_options: object, command: Command) => {
      const { client, json } = connect(command);
      emit(json, await client.listEventTypes(), eventTypeTable);
    });

  registerTrialCommands(webhooks);
  registerDeliveryCommands(webhooks);
}
