import { describe, expect, it } from "vitest";
import { toneColour } from "../../../src/formats/deployment-card.js";
import { discordLimits, renderDiscord } from "../../../src/formats/discord.js";
import { deploymentEventTypes, eventOf, hostileEnvelope, inputOf } from "./events.js";

interface Embed {
  title: string;
  url?: string;
  description?: string;
  color: number;
  fields: { name: string; value: string; inline: boolean }[];
  footer: { text: string };
  timestamp: string;
}
interface DiscordMessage {
  allowed_mentions: { parse: string[] };
  content?: string;
  embeds: Embed[];
}

const render = (envelope = eventOf("deployment.succeeded")) =>
  JSON.parse(renderDiscord(inputOf(envelope)).body) as DiscordMessage;
const only = (message: DiscordMessage) => message.embeds[0] as Embed;

/** Discord's count for the 6000 limit: title, description, field names and values, footer, author. */
const embedCharacters = (embed: Embed) =>
  embed.title.length +
  (embed.description?.length ?? 0) +
  embed.fields.reduce((sum, field) => sum + field.name.length + field.value.length, 0) +
  embed.footer.text.length;

describe("Discord", () => {
  it.each(deploymentEventTypes)("%s: one embed, its colour an integer, mentions turned off", (type) => {
    const message = render(eventOf(type));
    expect(message.allowed_mentions).toEqual({ parse: [] });
    expect(message.content).toBeUndefined();
    const embed = only(message);
    expect(embed.title).toMatch(/^Rollout \w+: shop to production$/);
    expect(Number.isInteger(embed.color)).toBe(true);
    expect(embed.timestamp).toBe("2026-11-27T14:04:12.345Z");
    expect(embed.fields).toContainEqual({ name: "Commit", value: "9fceb02", inline: true });
  });

  it("colours by status and links the title to the url", () => {
    const succeeded = only(render(eventOf("deployment.succeeded")));
    expect(succeeded.color).toBe(Number.parseInt(toneColour.good.slice(1), 16));
    expect(succeeded.url).toBe("https://shop.example.com/");
    const failed = only(render(eventOf("deployment.failed")));
    expect(failed.color).toBe(Number.parseInt(toneColour.bad.slice(1), 16));
    expect(failed.url).toBeUndefined();
    expect(failed.description).toContain("**Error**\nProgressDeadlineExceeded");
  });

  it("keeps hostile text within Discord's documented embed limits", () => {
    const embed = only(render(hostileEnvelope()));
    expect(embed.title.length).toBeLessThanOrEqual(discordLimits.title);
    expect(embed.description?.length).toBeLessThanOrEqual(discordLimits.description);
    expect(embed.fields.length).toBeLessThanOrEqual(discordLimits.fields);
    for (const field of embed.fields) {
      expect(field.name.length).toBeLessThanOrEqual(discordLimits.fieldName);
      expect(field.value.length).toBeLessThanOrEqual(discordLimits.fieldValue);
    }
    expect(embed.footer.text.length).toBeLessThanOrEqual(discordLimits.footer);
    expect(embedCharacters(embed)).toBeLessThanOrEqual(discordLimits.total);
  });

  it("escapes Discord markdown, so event text shows no mention, masked link or formatting", () => {
    const embed = only(render(hostileEnvelope()));
    for (const text of [embed.title, embed.description ?? "", ...embed.fields.map((f) => f.value)]) {
      const unescaped = text
        .replace(/\*\*(Commit message|Error|Why it failed|What changed)\*\*/g, "")
        .replace(/\\./g, "");
      expect(unescaped).not.toMatch(/[@<[\]*_~`]/);
    }
  });
});
