// @vitest-environment happy-dom
// The Adaptive Cards SDK renders into a DOM: happy-dom gives it one in Node.
import { AdaptiveCard, SerializationContext } from "adaptivecards";
import { describe, expect, it } from "vitest";
import { discordLimits, renderDiscord } from "../../../src/formats/discord.js";
import { googleChatLimits, renderGoogleChat } from "../../../src/formats/googlechat.js";
import { renderMsTeams } from "../../../src/formats/msteams.js";
import { rolloutCard, rolloutCardLimits } from "../../../src/formats/rollout-card.js";
import { renderSlack, slackLimits } from "../../../src/formats/slack.js";
import {
  eventOf,
  exampleDetails,
  hostileDetails,
  hostileEnvelope,
  inputOf,
  inputWithDetails,
} from "./events.js";

// "What changed" and the links on the chat cards when an event has rollout details: shown, escaped,
// within each service's limits with the worst event and the worst details together; a card of an
// event without details is the card it always was. Templates: template.test.ts.

const succeeded = () => eventOf("deployment.succeeded");

describe("rolloutCard: the lines every chat card shows", () => {
  it("shows the revision, the images that changed (init ones marked) and the version, not those kept", () => {
    expect(rolloutCard(exampleDetails())).toEqual({
      lines: [
        "Revision 3 → 4",
        "migrate (init): registry.example/shop-migrate:1.4.1 → registry.example/shop-migrate:1.4.2",
        "web: registry.example/shop:1.4.1 → registry.example/shop:1.4.2",
        "Version 1.4.2",
      ],
      links: exampleDetails().links,
    });
  });

  it("counts the images past the bound, drops links it cannot open, and keeps at most the bound", () => {
    const card = rolloutCard(hostileDetails());
    expect(card?.lines.filter((line) => line.includes(" → ")).length).toBe(rolloutCardLimits.imageLines + 1);
    expect(card?.lines).toContain(`… and ${40 - rolloutCardLimits.imageLines} more images`);
    expect(card?.links).toHaveLength(rolloutCardLimits.links);
    expect(card?.links.every((link) => link.url.startsWith("https://"))).toBe(true);
  });

  it("says a first rollout's images without a before, and an unchanged one as such", () => {
    const first = exampleDetails();
    first.changes.previous_revision = null;
    first.changes.images = [{ container: "web", init: false, before: null, after: "shop:1" }];
    expect(rolloutCard(first)?.lines.slice(0, 2)).toEqual(["Revision 4", "web: shop:1"]);
    const same = exampleDetails();
    same.changes.images = [{ container: "web", init: false, before: "shop:1", after: "shop:1" }];
    expect(rolloutCard(same)?.lines).toContain("Images unchanged");
  });

  it("is null for an event without details, and reads details of another shape without failing", () => {
    expect(rolloutCard(null)).toBeNull();
    expect(rolloutCard({ workload: {}, changes: { images: "x" }, links: [{}] } as never)).toEqual({
      lines: [],
      links: [],
    });
  });
});

describe("Slack with details", () => {
  const render = (input = inputWithDetails(succeeded(), exampleDetails())) =>
    JSON.parse(renderSlack(input).body) as {
      attachments: {
        blocks: {
          type: string;
          text?: { text: string };
          elements?: { text: { text: string }; url: string }[];
        }[];
      }[];
    };

  it("adds a What changed section and a button per link after Open deployment", () => {
    const blocks = render().attachments[0]?.blocks ?? [];
    expect(blocks.find((b) => b.text?.text.startsWith("*What changed*"))?.text?.text).toContain(
      "web: registry.example/shop:1.4.1 → registry.example/shop:1.4.2",
    );
    const buttons = blocks.find((b) => b.type === "actions")?.elements ?? [];
    expect(buttons.map((b) => b.text.text)).toEqual(["Open deployment", "Grafana", "Logs"]);
  });

  it("is the card it was for an event without details", () => {
    expect(renderSlack(inputOf(succeeded())).body).toBe(
      renderSlack({ ...inputOf(succeeded()), rollout: null }).body,
    );
    expect(renderSlack(inputOf(succeeded())).body).not.toContain("What changed");
  });

  it("stays within Slack's limits with the worst event and details, escaping their text", () => {
    const message = render(inputWithDetails(hostileEnvelope(), hostileDetails()));
    const blocks = message.attachments[0]?.blocks ?? [];
    expect(blocks.length + 1).toBeLessThanOrEqual(slackLimits.blocks);
    for (const block of blocks) {
      if (block.text) expect(block.text.text.length).toBeLessThanOrEqual(slackLimits.sectionText);
      for (const element of block.type === "actions" ? (block.elements ?? []) : []) {
        expect(element.text.text.length).toBeLessThanOrEqual(slackLimits.buttonText);
        expect(element.url.length).toBeLessThanOrEqual(3000);
      }
    }
    const changed = blocks.find((b) => b.text?.text.startsWith("*What changed*"))?.text?.text ?? "";
    expect(changed.replace(/&(amp|lt|gt);/g, "")).not.toMatch(/[<>&]/);
  });
});

describe("Microsoft Teams with details", () => {
  const read = (content: unknown) => {
    const card = new AdaptiveCard();
    const context = new SerializationContext();
    card.parse(content, context);
    const events = Array.from({ length: context.eventCount }, (_, i) => context.getEventAt(i).message);
    return {
      card,
      problems: [...events, ...card.validateProperties().validationEvents.map((e) => e.message)],
      element: card.render(),
    };
  };
  const contentOf = (body: string) => JSON.parse(body).attachments[0].content;

  it("the Adaptive Cards SDK parses, validates and renders What changed and the link actions", () => {
    const { card, problems, element } = read(
      contentOf(renderMsTeams(inputWithDetails(succeeded(), exampleDetails())).body),
    );
    expect(problems).toEqual([]);
    expect(element?.textContent).toContain("What changed");
    expect(element?.textContent).toContain("web: registry.example/shop:1.4.1 → registry.example/shop:1.4.2");
    const titles = Array.from(
      { length: card.getActionCount() },
      (_, i) => (card.getActionAt(i) as unknown as { title: string }).title,
    );
    expect(titles).toEqual(["Open deployment", "Grafana", "Logs"]);
  });

  it("stays under Teams' 28 KB and readable by the SDK with the worst event and details", () => {
    const { body } = renderMsTeams(inputWithDetails(hostileEnvelope(), hostileDetails()));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(28_000);
    expect(Buffer.byteLength(body, "utf16le")).toBeLessThanOrEqual(28_000);
    expect(read(contentOf(body)).problems).toEqual([]);
  });
});

describe("Discord with details", () => {
  const embedOf = (body: string) => JSON.parse(body).embeds[0];
  const characters = (embed: {
    title: string;
    description?: string;
    fields: { name: string; value: string }[];
    footer: { text: string };
  }) =>
    embed.title.length +
    (embed.description?.length ?? 0) +
    embed.fields.reduce((sum, f) => sum + f.name.length + f.value.length, 0) +
    embed.footer.text.length;

  it("adds What changed and the links as masked links to the description", () => {
    const embed = embedOf(renderDiscord(inputWithDetails(succeeded(), exampleDetails())).body);
    expect(embed.description).toContain("**What changed**\nRevision 3 → 4");
    expect(embed.description).toContain(
      "[Grafana](https://grafana.example/d/rollouts?var-namespace=shop&var-workload=shop)",
    );
  });

  it("keeps the worst event and details within 6000 characters and a 4096-character description", () => {
    for (const envelope of [hostileEnvelope(), succeeded()]) {
      const embed = embedOf(renderDiscord(inputWithDetails(envelope, hostileDetails())).body);
      expect(characters(embed)).toBeLessThanOrEqual(discordLimits.total);
      expect(embed.description.length).toBeLessThanOrEqual(discordLimits.description);
    }
  });
});

describe("Google Chat with details", () => {
  it("adds What changed and a button per link, under 32,000 bytes with the worst event and details", () => {
    const widgets = JSON.parse(renderGoogleChat(inputWithDetails(succeeded(), exampleDetails())).body)
      .cardsV2[0].card.sections[0].widgets;
    expect(
      widgets.some((w: { textParagraph?: { text: string } }) =>
        w.textParagraph?.text.startsWith("<b>What changed</b>"),
      ),
    ).toBe(true);
    const buttons = widgets.find((w: { buttonList?: unknown }) => w.buttonList).buttonList.buttons;
    expect(buttons.map((b: { text: string }) => b.text)).toEqual(["Open deployment", "Grafana", "Logs"]);
    const worst = renderGoogleChat(inputWithDetails(hostileEnvelope(), hostileDetails())).body;
    expect(Buffer.byteLength(worst)).toBeLessThanOrEqual(googleChatLimits.messageBytes);
  });
});
