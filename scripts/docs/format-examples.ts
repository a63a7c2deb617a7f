import { renderCloudEvent } from "../../src/formats/cloudevents.js";
import { renderDiscord } from "../../src/formats/discord.js";
import type { Envelope } from "../../src/formats/envelope.js";
import { renderGoogleChat } from "../../src/formats/googlechat.js";
import { renderMsTeams } from "../../src/formats/msteams.js";
import { envelopeWithRollout, type RolloutDetails } from "../../src/formats/rollout-details.js";
import type { RolloutFailure } from "../../src/formats/rollout-failure.js";
import { renderSlack } from "../../src/formats/slack.js";
import { renderTemplate } from "../../src/formats/template.js";
import type { FormatInput, RenderedBody } from "../../src/formats/types.js";

// The example bodies of docs/formats.md, rendered by the renderers themselves from one fixed event:
// `npm run docs:formats` rewrites every fenced block that follows an `<!-- example: key -->` marker,
// and a unit test fails when the page and the renderers disagree.

/** A rollout as the operator records it, with fixed ids and times so the examples do not change. */
export function exampleEnvelope(kind: "succeeded" | "failed"): Envelope {
  const failed = kind === "failed";
  return {
    id: "019ac5f2-3b4c-7d5e-8f60-718293a4b5c6",
    event_type: failed ? "deployment.failed" : "deployment.succeeded",
    timestamp: "2026-11-27T14:04:12.345Z",
    project_id: 3,
    payload: {
      deployment_id: 42,
      project_id: 3,
      project_name: "shop",
      environment: "production",
      branch: "main",
      commit_sha: "9fceb02d0ae598e95dc970b74767f19372d61af8",
      commit_message: "Checkout: retry card payments once on a gateway timeout\n\nCloses #118.",
      url: failed ? null : "https://shop.example.com",
      status: failed ? "failed" : "succeeded",
      error_message: failed
        ? 'ProgressDeadlineExceeded: ReplicaSet "shop-7c9d" has timed out progressing.'
        : null,
      started_at: "2026-11-27T14:02:51.000Z",
      finished_at: "2026-11-27T14:04:12.000Z",
    },
  };
}

/** Why the example's failed rollout failed, as the operator reads it from its pods (rollout-failure.ts). */
export const exampleFailure: RolloutFailure = {
  reason: "CrashLoopBackOff",
  message: "back-off 40s restarting failed container=web pod=shop-7c9d8f6b5-x2k4q_shop(8d0c…)",
  // The example event failed at its progress deadline (its error_message says so).
  failed_early: false,
  problems: [
    {
      pod: "shop-7c9d8f6b5-x2k4q",
      container: "web",
      init_container: false,
      reason: "CrashLoopBackOff",
      message: "back-off 40s restarting failed container=web pod=shop-7c9d8f6b5-x2k4q_shop(8d0c…)",
      exit_code: 1,
      restart_count: 4,
      termination_message: null,
      log_tail: [
        "shop 1.4.2 starting",
        "[redacted]",
        "Error: connect ECONNREFUSED 10.96.14.2:5432 (payments database)",
      ],
    },
  ],
  pods_with_problems: 2,
  problems_omitted: 1,
  warnings: [
    {
      pod: "shop-7c9d8f6b5-x2k4q",
      reason: "BackOff",
      message: "Back-off restarting failed container web in pod shop-7c9d8f6b5-x2k4q_shop(8d0c…)",
      count: 9,
      last_seen: "2026-11-27T14:04:10.000Z",
    },
  ],
};

/** The rollout details of the example's failed event: what changed, and why it failed. */
export const exampleFailedRollout = (): RolloutDetails => ({
  ...exampleRolloutDetails(),
  failure: exampleFailure,
});
/**
 * The details of that rollout as a cluster records them (formats/rollout-details.ts): two images moved,
 * one kept, Argo CD's tracking annotation, links from ROLLOUT_LINKS.
 */
export function exampleRolloutDetails(): RolloutDetails {
  return {
    workload: { kind: "Deployment", name: "shop", namespace: "shop", revision: "4" },
    changes: {
      images: [
        {
          container: "migrate",
          init: true,
          before: "registry.example/shop-migrate:1.4.1",
          after: "registry.example/shop-migrate:1.4.2",
        },
        {
          container: "web",
          init: false,
          before: "registry.example/shop:1.4.1",
          after: "registry.example/shop:1.4.2",
        },
        {
          container: "proxy",
          init: false,
          before: "envoyproxy/envoy:v1.31",
          after: "envoyproxy/envoy:v1.31",
        },
      ],
      previous_revision: "3",
      change_cause: "Fix the checkout total rounding",
      commit_sha: "9fceb02d0ae598e95dc970b74767f19372d61af8",
      branch: "main",
      metadata: {
        "app.kubernetes.io/version": "1.4.2",
        "argocd.argoproj.io/tracking-id": "shop:apps/Deployment:shop/shop",
      },
    },
    links: [
      { name: "Grafana", url: "https://grafana.example/d/rollouts?var-namespace=shop&var-workload=shop" },
      { name: "Logs", url: "https://logs.example/search?q=namespace%3Dshop" },
    ],
  };
}

/** The template shown in the docs: a small JSON body for a generic HTTP API. */
export const exampleTemplate = `{
  "summary": {{ payload.project_name | append: " to " | append: payload.environment | json }},
  "status": {{ payload.status | json }},
  "commit": {{ payload.commit_sha | slice: 0, 7 | json }},
  "message": {{ payload.commit_message | json }},
  "link": {{ payload.url | json }},
  "event": { "id": {{ event.id | json }}, "type": {{ event.event_type | json }} },
  "at": {{ event.timestamp | date: "%Y-%m-%d %H:%M UTC" | json }}
}
`;

const input = (envelope: Envelope): FormatInput => ({
  envelope,
  template: null,
  templateContentType: null,
  // A cluster's rollout has details, which every card shows.
  rollout: exampleRolloutDetails(),
});
const pretty = (rendered: RenderedBody) => `${JSON.stringify(JSON.parse(rendered.body), null, 2)}\n`;

/** A binary-mode CloudEvent as it goes over the wire: Content-Type, the ce-* headers, the body. */
function binaryCloudEvent(envelope: Envelope): string {
  const rendered = renderCloudEvent(envelope, "binary");
  const headers = Object.entries(rendered.headers ?? {}).map(([name, value]) => `${name}: ${value}`);
  return `${[`Content-Type: ${rendered.contentType}`, ...headers].join("\n")}\n\n${rendered.body}\n`;
}

/** Each marker key's fence and content. */
export async function formatExamples(): Promise<Record<string, { fence: string; text: string }>> {
  const succeeded = input(exampleEnvelope("succeeded"));
  const failed = { ...input(exampleEnvelope("failed")), rollout: exampleFailedRollout() };
  const template = await renderTemplate({
    ...succeeded,
    template: exampleTemplate,
    templateContentType: null,
  });
  return {
    event: { fence: "json", text: `${JSON.stringify(exampleEnvelope("succeeded"), null, 2)}\n` },
    failure: { fence: "json", text: `${JSON.stringify(exampleFailure, null, 2)}\n` },
    "rollout-details": {
      fence: "json",
      text: `${JSON.stringify(JSON.parse(envelopeWithRollout(JSON.stringify(exampleEnvelope("succeeded")), exampleRolloutDetails())), null, 2)}\n`,
    },
    slack: { fence: "json", text: pretty(renderSlack(succeeded)) },
    msteams: { fence: "json", text: pretty(renderMsTeams(succeeded)) },
    discord: { fence: "json", text: pretty(renderDiscord(failed)) },
    googlechat: { fence: "json", text: pretty(renderGoogleChat(succeeded)) },
    "cloudevents-structured": {
      fence: "json",
      text: pretty(renderCloudEvent(exampleEnvelope("succeeded"), "structured")),
    },
    "cloudevents-binary": { fence: "http", text: binaryCloudEvent(exampleEnvelope("succeeded")) },
    "template-source": { fence: "liquid", text: exampleTemplate },
    "template-output": { fence: "json", text: `${template.body}\n` },
  };
}

/** The page with the block after each `<!-- example: key -->` marker replaced by the rendered example. */
export async function withExamples(page: string): Promise<string> {
  const examples = await formatExamples();
  return page.replace(
    /<!-- example: ([a-z-]+) -->\n```[a-z]*\n(?:[\s\S]*?\n)??```\n/g,
    (_match, key: string) => {
      const example = examples[key];
      if (example === undefined) throw new Error(`docs/formats.md names an unknown example "${key}"`);
      return `<!-- example: ${key} -->\n\`\`\`${example.fence}\n${example.text}\`\`\`\n`;
    },
  );
}
