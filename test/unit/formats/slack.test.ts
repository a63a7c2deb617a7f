import { describe, expect, it } from "vitest";
import { toneColour } from "../../../src/formats/deployment-card.js";
import { renderSlack, slackLimits } from "../../../src/formats/slack.js";
import { deploymentEventTypes, eventOf, hostileEnvelope, inputOf } from "./events.js";

interface TextObject {
  type: "plain_text" | "mrkdwn";
  text: string;
}
interface Block {
  type: string;
  text?: TextObject;
  fields?: TextObject[];
  elements?: ({ type: string; url?: string; text?: TextObject } & Partial<TextObject>)[];
}
interface SlackMessage {
  text: string;
  blocks: Block[];
  attachments: { color: string; blocks: Block[] }[];
}

const render = (envelope = eventOf("deployment.succeeded")) => {
  const rendered = renderSlack(inputOf(envelope));
  expect(rendered.contentType).toBe("application/json");
  return JSON.parse(rendered.body) as SlackMessage;
};
const allBlocks = (message: SlackMessage) => [
  ...message.blocks,
  ...message.attachments.flatMap((a) => a.blocks),
];
/** Every mrkdwn text of the message, with the top-level fallback (which Slack also reads as mrkdwn). */
const mrkdwnTexts = (message: SlackMessage) => [
  message.text,
  ...allBlocks(message).flatMap((block) => [
    ...(block.text?.type === "mrkdwn" ? [block.text.text] : []),
    ...(block.fields ?? []).map((field) => field.text),
    ...(block.elements ?? []).filter((e) => e.type === "mrkdwn").map((e) => e.text as string),
  ]),
];

describe("Slack", () => {
  it.each(deploymentEventTypes)(
    "%s: a header, the facts, a coloured attachment and a fallback text",
    (type) => {
      const message = render(eventOf(type));
      expect(message.text).toMatch(/^Rollout \w+: shop to production$/);
      expect(message.blocks[0]).toEqual({ type: "header", text: { type: "plain_text", text: message.text } });
      const fields = message.attachments[0]?.blocks[0]?.fields?.map((f) => f.text);
      expect(fields).toContain("*Project*\nshop");
      expect(fields).toContain("*Environment*\nproduction");
      expect(fields).toContain("*Commit*\n9fceb02");
    },
  );

  it.each([
    ["deployment.succeeded", toneColour.good],
    ["deployment.failed", toneColour.bad],
    ["deployment.created", toneColour.progress],
  ] as const)("%s is coloured %s", (type, colour) => {
    expect(render(eventOf(type)).attachments[0]?.color).toBe(colour);
  });

  it("links the url with a button, and shows the error of a failed rollout", () => {
    const succeeded = allBlocks(render(eventOf("deployment.succeeded")));
    expect(succeeded.find((b) => b.type === "actions")?.elements?.[0]?.url).toBe("https://shop.example.com/");
    const failed = allBlocks(render(eventOf("deployment.failed")));
    expect(failed.find((b) => b.type === "actions")).toBeUndefined();
    expect(failed.some((b) => b.text?.text.startsWith("*Error*\nProgressDeadlineExceeded"))).toBe(true);
  });

  it("keeps hostile text within Slack's documented limits", () => {
    const message = render(hostileEnvelope());
    const blocks = allBlocks(message);
    expect(blocks.length).toBeLessThanOrEqual(slackLimits.blocks);
    expect(message.blocks[0]?.text?.text.length).toBeLessThanOrEqual(slackLimits.headerText);
    for (const block of blocks) {
      if (block.text) expect(block.text.text.length).toBeLessThanOrEqual(slackLimits.sectionText);
      expect(block.fields?.length ?? 0).toBeLessThanOrEqual(slackLimits.fields);
      for (const field of block.fields ?? [])
        expect(field.text.length).toBeLessThanOrEqual(slackLimits.fieldText);
    }
    expect(message.text.endsWith("…")).toBe(true);
  });

  it("escapes &, < and > in every mrkdwn text, so no mention or link comes from the event", () => {
    for (const text of mrkdwnTexts(render(hostileEnvelope()))) {
      expect(text).not.toMatch(/<[!@#]|<https?:/);
      expect(text.replace(/&(amp|lt|gt);/g, "")).not.toMatch(/[<>&]/);
    }
  });

  it("links no URL it cannot stand behind (too long for a button, or not http)", () => {
    const long = allBlocks(render(hostileEnvelope("deployment.succeeded")));
    expect(long.find((b) => b.type === "actions")).toBeUndefined();
    const script = eventOf("deployment.succeeded");
    script.payload = { ...script.payload, url: "javascript:alert(1)" };
    expect(allBlocks(render(script)).find((b) => b.type === "actions")).toBeUndefined();
  });
});
