// @vitest-environment happy-dom
// The Adaptive Cards SDK renders into a DOM: happy-dom gives it one in Node.
import { AdaptiveCard } from "adaptivecards";
import { describe, expect, it } from "vitest";
import { renderDiscord } from "../../../src/formats/discord.js";
import { failureSection } from "../../../src/formats/failure-section.js";
import { renderGoogleChat } from "../../../src/formats/googlechat.js";
import { renderMsTeams } from "../../../src/formats/msteams.js";
import type { RolloutDetails } from "../../../src/formats/rollout-details.js";
import { renderSlack } from "../../../src/formats/slack.js";
import { eventOf, inputOf, rolloutWithFailure } from "./events.js";

// The "Why it failed" section of the four chat cards: shown whenever the event carries a failure, with
// the reason, the container and pod, what was said, exit code and restarts, the log's last lines and
// the newest warnings; absent otherwise. Each service's limits with hostile text: the renderers' tests.

const crashLoop: RolloutDetails = {
  ...rolloutWithFailure(() => ""),
  failure: {
    reason: "CrashLoopBackOff",
    message: "back-off 40s restarting failed container=web pod=web-7c9d8f6b5-crash1_shop(pod-crash1)",
    failed_early: true,
    problems: [
      {
        pod: "web-7c9d8f6b5-crash1",
        container: "web",
        init_container: false,
        reason: "CrashLoopBackOff",
        message: "back-off 40s restarting failed container=web pod=web-7c9d8f6b5-crash1_shop(pod-crash1)",
        exit_code: 1,
        restart_count: 3,
        termination_message: null,
        log_tail: ["starting web 2.0.0", "[redacted]", "panic: cannot open /etc/web/config.yaml"],
      },
    ],
    pods_with_problems: 3,
    problems_omitted: 2,
    warnings: [
      {
        pod: "web-7c9d8f6b5-crash1",
        reason: "BackOff",
        message: "Back-off restarting failed container web in pod web-7c9d8f6b5-crash1_shop(pod-crash1)",
        count: 12,
        last_seen: "2026-11-29T09:01:10.000Z",
      },
    ],
  },
};

const renderers = {
  slack: renderSlack,
  msteams: renderMsTeams,
  discord: renderDiscord,
  googlechat: renderGoogleChat,
};

describe("Why it failed", () => {
  it("says the reason, where, what was said, the exit code, the log and the warnings", () => {
    expect(failureSection(crashLoop)?.split("\n")).toEqual([
      "CrashLoopBackOff in container web of pod web-7c9d8f6b5-crash1",
      "back-off 40s restarting failed container=web pod=web-7c9d8f6b5-crash1_shop(pod-crash1)",
      "exit code 1 · 3 restarts",
      "Last log lines:",
      "starting web 2.0.0",
      "[redacted]",
      "panic: cannot open /etc/web/config.yaml",
      "Failed before the progress deadline: this will not heal by waiting.",
      "",
      "2 more pods with problems",
      "",
      "Warnings:",
      "BackOff (×12): Back-off restarting failed container web in pod web-7c9d8f6b5-crash1_shop(pod-crash1)",
    ]);
  });

  it.each(Object.entries(renderers))(
    "%s shows it on a failed event that carries it, and only then",
    (_name, render) => {
      const failed = render(inputOf(eventOf("deployment.failed"), crashLoop)).body;
      expect(failed).toContain("Why it failed");
      expect(failed).toContain("panic: cannot open /etc/web/config.yaml");
      expect(failed).toContain("exit code 1");
      expect(render(inputOf(eventOf("deployment.failed"))).body).not.toContain("Why it failed");
      const withoutFailure = { ...crashLoop, failure: undefined };
      expect(render(inputOf(eventOf("deployment.succeeded"), withoutFailure)).body).not.toContain(
        "Why it failed",
      );
    },
  );

  it("renders in the Adaptive Cards SDK a line per block", () => {
    const message = JSON.parse(renderMsTeams(inputOf(eventOf("deployment.failed"), crashLoop)).body);
    const card = new AdaptiveCard();
    card.parse(message.attachments[0].content);
    expect(card.validateProperties().validationEvents).toEqual([]);
    const text = card.render()?.textContent ?? "";
    expect(text).toContain("Why it failed");
    expect(text).toContain("CrashLoopBackOff in container web of pod web-7c9d8f6b5-crash1");
  });
});
