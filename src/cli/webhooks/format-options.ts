import { readFile } from "node:fs/promises";
import { type Command, InvalidArgumentError, Option } from "commander";
import { deliveryFormats } from "../../formats/types.js";
import { usageError } from "../errors.js";

// The options that choose what a webhook's deliveries look like (docs/formats.md). Each maps to one API
// field and is left out of the request when not given, so `update` keeps what it does not name.

export interface FormatOptions {
  format?: string;
  cloudeventsMode?: string;
  signatureScheme?: string;
  templateFile?: string;
  templateContentType?: string;
  header?: [string, string][];
  removeHeaders?: boolean;
  rolloutDetails?: boolean;
}

/** `Name=value`, repeatable; the value may contain `=`. The server checks names and values. */
function headerPair(value: string, previous: [string, string][] = []): [string, string][] {
  const equals = value.indexOf("=");
  if (equals <= 0) throw new InvalidArgumentError("It must be Name=value, such as Authorization='Bearer …'.");
  return [...previous, [value.slice(0, equals), value.slice(equals + 1)]];
}

export function addFormatOptions(command: Command, { forUpdate }: { forUpdate: boolean }): Command {
  command
    .addOption(new Option("--format <name>", "body format (default: envelope)").choices(deliveryFormats))
    .addOption(
      new Option("--cloudevents-mode <mode>", "CloudEvents HTTP mode (default: structured)").choices([
        "structured",
        "binary",
      ]),
    )
    .addOption(
      new Option("--signature-scheme <scheme>", "how deliveries are signed (default: hmac-sha256)").choices([
        "hmac-sha256",
        "standard-webhooks",
      ]),
    )
    .option("--template-file <path>", "Liquid template of the body, for --format template")
    .option(
      "--template-content-type <type>",
      "Content-Type of the template's body (default: application/json)",
    )
    .addOption(
      new Option(
        "--header <Name=value>",
        forUpdate
          ? "custom request header, repeatable; replaces all the webhook's custom headers"
          : "custom request header (such as Authorization), repeatable; its value is never shown again",
      ).argParser(headerPair),
    );
  command.option(
    "--rollout-details",
    "rollout events carry payload.rollout: images before and after, version labels, links, why it failed",
  );
  if (forUpdate) {
    command
      .addOption(new Option("--remove-headers", "remove every custom request header").conflicts("header"))
      .option("--no-rollout-details", "rollout events' bodies without payload.rollout again");
  }
  return command;
}

/** The API's format fields for the options given; none for the options left out. */
export async function formatFields(
  command: Command,
  options: FormatOptions,
): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  if (options.format !== undefined) fields.format = options.format;
  if (options.cloudeventsMode !== undefined) fields.cloudevents_mode = options.cloudeventsMode;
  if (options.signatureScheme !== undefined) fields.signature_scheme = options.signatureScheme;
  if (options.templateContentType !== undefined) fields.template_content_type = options.templateContentType;
  if (options.templateFile !== undefined) {
    try {
      fields.template = await readFile(options.templateFile, "utf8");
    } catch (error) {
      usageError(command, `cannot read --template-file: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
    }
  }
  if (options.header !== undefined) fields.headers = Object.fromEntries(options.header);
  if (options.removeHeaders) fields.headers = null;
  if (options.rolloutDetails !== undefined) fields.rollout_details = options.rolloutDetails;
  return fields;
}
