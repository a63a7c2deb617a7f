#!/usr/bin/env -S MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=4 --heap-growing-percent=50 --expose-gc
// Run as `webhook-operator …` (npm's bin), Node gets the flags and environment that `npm start` and the
// image give it: a 4 MiB young generation, old-generation collections at 50% growth, one glibc malloc
// arena and a fixed mmap threshold (docs/operating.md, Memory). test/unit/node-flags.test.ts holds the
// three places to the same flags. The build bundles this file and what it imports into dist/server/.
import { Command } from "commander";
import { version } from "../version.js";
import { reportError } from "./errors.js";
import { serve } from "./serve.js";

// One binary: `serve` runs the operator, `webhooks` (alias `hooks`) is the API client.
const program = new Command()
  .name("webhook-operator")
  .description("Kubernetes operator and service for outbound deployment webhooks")
  .version(version)
  // Set before adding commands: subcommands inherit these. Errors throw instead of exiting, so exit
  // codes are decided in one place (reportError); a usage mistake prints that command's help.
  .exitOverride()
  .showHelpAfterError()
  .configureHelp({ showGlobalOptions: true, sortSubcommands: false });

program
  .command("serve")
  .description("run the operator: API, delivery workers, and (in a cluster) the controller")
  .option("--no-kubernetes", "run the API and delivery workers only, even where a cluster is configured")
  .action(serve);

// The API client's commands (and axios behind them, ~30 MiB) are not loaded to run the service.
if (process.argv[2] !== "serve") {
  (await import("./webhooks/commands.js")).registerWebhookCommands(program);
  (await import("./secrets.js")).registerSecretsCommands(program);
}

// `webhook-operator hooks list | head -1` closes the pipe early; that is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

program.parseAsync().catch((error: unknown) => {
  process.exitCode = reportError(error);
});
