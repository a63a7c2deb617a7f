import { describe, expect, it } from "vitest";
import { toneColour } from "../../../src/formats/deployment-card.js";
import { googleChatLimits, renderGoogleChat } from "../../../src/formats/googlechat.js";
import { astralEnvelope, deploymentEventTypes, eventOf, hostileEnvelope, inputOf } from "./events.js";

interface Widget {
  decoratedText?: { topLabel: string; text: string };
  textParagraph?: { text: string };
  buttonList?: { buttons: { text: string; onClick: { openLink: { url: string } } }[] };
}
interface ChatMessage {
  text?: string;
  cardsV2: {
    cardId: string;
    card: { header: { title: string; subtitle: string }; sections: { widgets: Widget[] }[] };
  }[];
}

const render = (envelope = eventOf("deployment.succeeded")) => {
  const rendered = renderGoogleChat(inputOf(envelope));
  return { bytes: Buffer.byteLength(rendered.body), message: JSON.parse(rendered.body) as ChatMessage };
};
const widgetsOf = (message: ChatMessage) =>
  message.cardsV2.flatMap((c) => c.card.sections.flatMap((s) => s.widgets));
/** The tags the formatted text may hold: ours only. */
const ourTags = /<\/?(b|br|font( color="#[0-9A-F]{6}")?)>/g;

describe("Google Chat", () => {
  it.each(deploymentEventTypes)("%s: one cardsV2 card with a header and the facts", (type) => {
    const { message } = render(eventOf(type));
    expect(message.text).toBeUndefined();
    expect(message.cardsV2).toHaveLength(1);
    expect(message.cardsV2[0]?.card.header.title).toMatch(/^Rollout \w+: shop to production$/);
    expect(widgetsOf(message)).toContainEqual({ decoratedText: { topLabel: "Project", text: "shop" } });
  });

  it("colours the status and links the url with a button", () => {
    const widgets = widgetsOf(render(eventOf("deployment.succeeded")).message);
    const status = widgets.find((w) => w.decoratedText?.topLabel === "Status");
    expect(status?.decoratedText?.text).toBe(`<font color="${toneColour.good}"><b>succeeded</b></font>`);
    const button = widgets.find((w) => w.buttonList)?.buttonList?.buttons[0];
    expect(button?.onClick.openLink.url).toBe("https://shop.example.com/");
  });

  it.each([
    ["markup and mentions", hostileEnvelope],
    ["astral characters", astralEnvelope],
  ])("keeps hostile text (%s) within Google Chat's message size and widget count", (_name, hostile) => {
    const { bytes, message } = render(hostile());
    expect(bytes).toBeLessThanOrEqual(googleChatLimits.messageBytes);
    expect(widgetsOf(message).length).toBeLessThanOrEqual(googleChatLimits.widgets);
  });

  it("HTML-escapes event text, so the only tags in the card are its own", () => {
    const widgets = widgetsOf(render(hostileEnvelope()).message);
    const texts = widgets.flatMap((w) => [w.decoratedText?.text ?? "", w.textParagraph?.text ?? ""]);
    for (const text of texts) expect(text.replace(ourTags, "")).not.toMatch(/[<>]/);
  });
});
