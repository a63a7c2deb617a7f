// @vitest-environment happy-dom
// The Adaptive Cards SDK renders into a DOM: happy-dom gives it one in Node.
import { AdaptiveCard, SerializationContext } from "adaptivecards";
import { afterEach, describe, expect, it } from "vitest";
import type { Envelope } from "../../../src/formats/envelope.js";
import { adaptiveCardVersion, renderMsTeams } from "../../../src/formats/msteams.js";
import { astralEnvelope, deploymentEventTypes, eventOf, hostileEnvelope, inputOf } from "./events.js";

interface TeamsMessage {
  type: string;
  attachments: { contentType: string; contentUrl: null; content: Record<string, unknown> }[];
}

const render = (envelope: Envelope) => {
  const rendered = renderMsTeams(inputOf(envelope));
  expect(rendered.contentType).toBe("application/json");
  return { body: rendered.body, message: JSON.parse(rendered.body) as TeamsMessage };
};

/** The card read by the official SDK as a host reads it: its parse warnings, its validation, its DOM. */
function readWithSdk(content: unknown) {
  const card = new AdaptiveCard();
  const context = new SerializationContext();
  card.parse(content, context);
  const parseEvents = Array.from({ length: context.eventCount }, (_, i) => context.getEventAt(i).message);
  const validation = card.validateProperties().validationEvents.map((event) => event.message);
  return { card, parseEvents, validation, element: card.render() };
}

afterEach(() => {
  AdaptiveCard.onProcessMarkdown = undefined;
});

describe("Microsoft Teams", () => {
  it.each(deploymentEventTypes)("%s: the Workflows message shape around one Adaptive Card", (type) => {
    const { message } = render(eventOf(type));
    expect(message.type).toBe("message");
    expect(message.attachments).toHaveLength(1);
    expect(message.attachments[0]?.contentType).toBe("application/vnd.microsoft.card.adaptive");
    expect(message.attachments[0]?.content).toMatchObject({
      type: "AdaptiveCard",
      version: adaptiveCardVersion,
    });
  });

  it.each(deploymentEventTypes)(
    "%s: the Adaptive Cards SDK parses, validates and renders the card",
    (type) => {
      const { message } = render(eventOf(type));
      const { parseEvents, validation, element } = readWithSdk(message.attachments[0]?.content);
      expect(parseEvents).toEqual([]);
      expect(validation).toEqual([]);
      expect(element?.tagName).toBe("DIV");
      expect(element?.textContent).toContain("shop to production");
      expect(element?.textContent).toContain("Commit: 9fceb02");
    },
  );

  it("gives a succeeded rollout an Open deployment button to its url, and a failed one its error", () => {
    const succeeded = readWithSdk(render(eventOf("deployment.succeeded")).message.attachments[0]?.content);
    const action = succeeded.card.getActionAt(0) as unknown as { url: string; title: string };
    expect(action).toMatchObject({ title: "Open deployment", url: "https://shop.example.com/" });
    const failed = readWithSdk(render(eventOf("deployment.failed")).message.attachments[0]?.content);
    expect(failed.card.getActionCount()).toBe(0);
    expect(failed.element?.textContent).toContain("Error: ProgressDeadlineExceeded");
  });

  it.each([
    ["markup and mentions", hostileEnvelope],
    ["astral characters", astralEnvelope],
  ])(
    "keeps a hostile event's card (%s) readable by the SDK and under Teams' 28 KB, in UTF-8 and UTF-16",
    (_name, hostile) => {
      const { body, message } = render(hostile());
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(28_000);
      expect(Buffer.byteLength(body, "utf16le")).toBeLessThanOrEqual(28_000);
      const { parseEvents, validation, element } = readWithSdk(message.attachments[0]?.content);
      expect([...parseEvents, ...validation]).toEqual([]);
      expect(element?.textContent).toContain("…");
    },
  );

  it("renders event text without markdown: a commit message cannot become a link or bold text", () => {
    // A markdown processor as a host has one; a TextBlock would go through it, a TextRun must not.
    AdaptiveCard.onProcessMarkdown = (text, result) => {
      result.outputHtml = text
        .replace(/\*\*(.+?)\*\*/g, "<strong>$1</strong>")
        .replace(/\[(.+?)\]\((.+?)\)/g, '<a href="$2">$1</a>');
      result.didProcess = true;
    };
    const control = readWithSdk({
      type: "AdaptiveCard",
      version: "1.4",
      body: [{ type: "TextBlock", text: "**b**" }],
    });
    expect(control.element?.querySelector("strong")).not.toBeNull();

    const { element } = readWithSdk(render(hostileEnvelope()).message.attachments[0]?.content);
    expect(element?.textContent).toContain("[click](https://evil.example) **bold**");
    expect(element?.querySelector("strong")).toBeNull();
    expect(element?.querySelector('a[href^="https://evil"]')).toBeNull();
  });
});
