import { type Command, Option } from "commander";
import { usageError } from "../errors.js";

// The secret is write-only: the API never returns it. Besides --secret, it can come from stdin or WEBHOOK_SECRET so it
// stays out of shell history and process listings. Precedence: --secret, then --secret-stdin (the two
// conflict), then WEBHOOK_SECRET — the variable on `create` only, so an exported secret is never
// written again by an `update` that meant to change something else.

export const secretEnvVar = "WEBHOOK_SECRET";

export interface SecretOptions {
  secret?: string;
  secretStdin?: boolean;
  removeSecret?: boolean;
}

export function addSecretOptions(command: Command, { forUpdate }: { forUpdate: boolean }): Command {
  command
    .addOption(
      new Option(
        "--secret <value>",
        forUpdate
          ? "replace the signing secret"
          : `signing secret (or --secret-stdin, or the ${secretEnvVar} environment variable)`,
      ).conflicts("secretStdin"),
    )
    .addOption(new Option("--secret-stdin", "read the signing secret from standard input"));
  if (forUpdate) {
    command.addOption(
      new Option("--remove-secret", "remove the signing secret: deliveries go unsigned").conflicts([
        "secret",
        "secretStdin",
      ]),
    );
  }
  return command;
}

/** The secret to send: a string, null to remove it, or undefined to leave it out of the request. */
export async function resolveSecret(
  command: Command,
  options: SecretOptions,
  { readEnv }: { readEnv: boolean },
): Promise<string | null | undefined> {
  if (options.removeSecret) return null;
  let secret: string | undefined;
  let source = "--secret";
  if (options.secret !== undefined) secret = options.secret;
  else if (options.secretStdin) {
    secret = (await readStdin()).replace(/\r?\n$/, "");
    source = "the secret read from standard input";
  } else if (readEnv && process.env[secretEnvVar]) secret = process.env[secretEnvVar];
  if (secret === "") {
    usageError(command, `${source} is empty`);
  }
  return secret;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Type the secret, then press Enter and Ctrl-D:\n");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
