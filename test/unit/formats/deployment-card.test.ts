import { describe, expect, it } from "vitest";
import { cardFacts, cardTitle, deploymentCard } from "../../../src/formats/deployment-card.js";
import { renderDiscord } from "../../../src/formats/discord.js";
import type { Envelope } from "../../../src/formats/envelope.js";
import { renderGoogleChat } from "../../../src/formats/googlechat.js";
import { renderMsTeams } from "../../../src/formats/msteams.js";
import { renderSlack } from "../../../src/formats/slack.js";
import { eventOf, inputOf } from "./events.js";

const withPayload = (payload: object, eventType = "deployment.succeeded"): Envelope =>
  ({ ...eventOf("deployment.succeeded"), event_type: eventType, payload }) as Envelope;

describe("the facts every card shows", () => {
  it("reads what rolled out, where, which commit, the status, the link and the times", () => {
    const card = deploymentCard(eventOf("deployment.succeeded"));
    expect(card).toMatchObject({
      headline: "Rollout succeeded",
      tone: "good",
      project: "shop",
      deploymentId: "42",
      environment: "production",
      commitSha: "9fceb02",
      commitSubject: "Checkout: retry card payments once on a gateway timeout",
      url: "https://shop.example.com/",
      errorMessage: null,
      startedAt: "2026-11-27 14:02:51 UTC",
      finishedAt: "2026-11-27 14:04:12 UTC",
      duration: "1m 21s",
    });
    expect(cardTitle(card)).toBe("Rollout succeeded: shop to production");
  });

  it.each([
    ["2026-11-27T14:00:00Z", "2026-11-27T14:00:07Z", "7s"],
    ["2026-11-27T14:00:00Z", "2026-11-27T16:05:00Z", "2h 5m"],
    ["2026-11-27T14:00:00Z", "2026-11-27T13:00:00Z", null],
    ["not a time", "2026-11-27T13:00:00Z", null],
  ])("duration from %s to %s: %s", (started_at, finished_at, duration) => {
    expect(deploymentCard(withPayload({ started_at, finished_at })).duration).toBe(duration);
  });

  it("reads no more of a long value than a card can show, and marks where it stopped", () => {
    const card = deploymentCard(
      withPayload({ error_message: `${"a".repeat(5000)}🚀`, commit_message: "b".repeat(9000) }),
    );
    expect(card.errorMessage).toBe(`${"a".repeat(4096)}…`);
    expect(card.commitSubject).toBe(`${"b".repeat(4096)}…`);
    const pair = deploymentCard(withPayload({ branch: `${"c".repeat(4095)}🚀${"d".repeat(100)}` }));
    expect(pair.branch).toBe(`${"c".repeat(4095)}…`); // the pair that straddles the cut is left out whole
  });

  it("leaves out what the event does not have, and lists no empty fact", () => {
    const card = deploymentCard(
      withPayload({ project_name: "shop", status: "pending" }, "deployment.created"),
    );
    expect(cardFacts(card).map((fact) => fact.label)).toEqual(["Project", "Status"]);
    expect(cardTitle(card)).toBe("Rollout started: shop");
    expect(card.tone).toBe("progress");
  });

  it.each([
    ["slack", renderSlack],
    ["msteams", renderMsTeams],
    ["discord", renderDiscord],
    ["googlechat", renderGoogleChat],
  ] as const)(
    "%s renders an event of another shape (a preview of project.created) without failing",
    (_name, render) => {
      const envelope = withPayload(
        { project_id: 3, project_name: "shop", slug: "shop", repo_url: null },
        "project.created",
      );
      const body = JSON.parse(render(inputOf(envelope)).body);
      expect(JSON.stringify(body)).toContain("project.created");
    },
  );
});
