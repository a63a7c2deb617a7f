import { describe, expect, it } from "vitest";
import { needing } from "../support/chart.js";
import { docBlock } from "../support/docs.js";
import { chartDir } from "../support/monitoring-files.js";
import { commandsOf } from "../support/terminal.js";
import { locateHelm, run } from "../support/tools.js";

// What `helm install` prints after installing (templates/NOTES.txt). Its step 4 applies the example
// Webhook, whose receiver is a Service inside the cluster: the notes must say how to allow it, in the
// words of the quick start (docs/kubernetes.md), and say nothing about it once it is allowed.

const helm = locateHelm();
const quickStartSet = /--set '(config\.delivery\.allowedDestinations=[^']+)'/.exec(
  commandsOf(docBlock("## Quick start with kind")).find((command) => command.startsWith("helm install")) ??
    "",
)?.[1];

function notes(...set: string[]): string {
  const args = ["install", "webhook-operator", chartDir, "-n", "webhook-operator", "--dry-run=client"];
  const result = run(helm.path as string, [...args, ...set.flatMap((value) => ["--set", value])]);
  if (result.status !== 0) throw new Error(result.stderr);
  return result.stdout.slice(result.stdout.indexOf("\nNOTES:\n"));
}

describe.skipIf(!helm.path)(needing("the install notes' step 4", helm), () => {
  it("tells how to let deliveries reach the example receiver, as the quick start does", () => {
    expect(quickStartSet).toBeDefined();
    const text = notes();
    expect(text).toContain("kubectl apply -f manifests/examples/receiver.yaml");
    expect(text).toContain(`--set '${quickStartSet}'`);
  });

  it("warns while config.webhookSecretsWithoutLabel opens every Secret to Webhooks, and only then", () => {
    expect(notes()).not.toContain("WARNING: config.webhookSecretsWithoutLabel");
    expect(notes("config.webhookSecretsWithoutLabel[0]=team-a/*")).not.toContain("WARNING");
    expect(notes("config.webhookSecretsWithoutLabel[0]=*")).toContain(
      'WARNING: config.webhookSecretsWithoutLabel is ["*"]: Webhooks may use every Secret',
    );
  });

  it.each([[quickStartSet ?? ""], ["config.delivery.allowPrivateNetworks=true"]])(
    "says nothing of it once allowed (%s)",
    (value) => {
      expect(notes(value)).not.toContain("allowedDestinations");
    },
  );
});
