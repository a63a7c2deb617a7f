import { cardFacts, cardTitle, deploymentCard, toneColour } from "./deployment-card.js";
import { failureSection, failureSectionTitle } from "./failure-section.js";
import { type RolloutCard, rolloutCard } from "./rollout-card.js";
import { type CharEscape, fitText, noEscape } from "./text-limits.js";
import type { FormatInput, RenderedBody } from "./types.js";

/**
 * Discord's documented embed limits (developer docs, "Embed Limits"): title 256 characters, description
 * 4096, 25 fields with a name of 256 and a value of 1024, footer 2048, and 6000 characters in all
 * across title, description, field names and values, footer and author. Our cuts keep the worst case
 * (9 facts, the title, a cut error message, the footer) below 6000.
 */
export const discordLimits = {
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  total: 6000,
  /** Ours, so that the sum stays under `total`. */
  factValue: 200,
  commitSubject: 300,
  errorMessage: 2000,
  /** The "Why it failed" section: with it the worst case stays below 6000 (5,800). */
  failure: 1200,
  changeLine: 150,
} as const;

// Discord markdown, masked links, and mentions (`<@id>`, `@everyone`) are all disarmed by a backslash.
const markdownChars = new Set(["\\", "*", "_", "~", "`", "|", ">", "<", "#", "-", "[", "]", "(", ")", "@"]);
const discordMarkdown: CharEscape = (char) => (markdownChars.has(char) ? `\\${char}` : char);

/**
 * An execute-webhook body with one embed. `allowed_mentions: {parse: []}` tells Discord to ping no one
 * whatever the text holds; the escaping keeps mentions and links from even showing as such.
 */
export function renderDiscord(input: FormatInput): RenderedBody {
  const card = deploymentCard(input.envelope);
  const description: string[] = [];
  if (card.commitSubject !== null) {
    description.push(
      `**Commit message**\n${fitText(card.commitSubject, discordLimits.commitSubject, discordMarkdown)}`,
    );
  }
  if (card.errorMessage !== null) {
    description.push(`**Error**\n${fitText(card.errorMessage, discordLimits.errorMessage, discordMarkdown)}`);
  }
  const why = failureSection(input.rollout);
  if (why !== null) {
    description.push(`**${failureSectionTitle}**\n${fitText(why, discordLimits.failure, discordMarkdown)}`);
  }
  const title = fitText(cardTitle(card), discordLimits.title, discordMarkdown);
  const fields = cardFacts(card)
    .slice(0, discordLimits.fields)
    .map((fact) => ({
      name: fact.label,
      value: fitText(fact.value, discordLimits.factValue, fact.ours ? noEscape : discordMarkdown),
      inline: true,
    }));
  const footer = { text: `${card.eventType} · event ${card.eventId}` };
  // "What changed" and the links take what the embed's 6000 characters leave, never more.
  const used =
    title.length +
    footer.text.length +
    fields.reduce((sum, field) => sum + field.name.length + field.value.length, 0) +
    description.reduce((sum, part) => sum + part.length + 2, 0);
  // "What changed" goes after a blank line (2 characters) in the description.
  const descriptionUsed = description.reduce((sum, part) => sum + part.length + 2, 0);
  const room = Math.min(discordLimits.total - used, discordLimits.description - descriptionUsed) - 2;
  const changes = changesText(rolloutCard(input.rollout), room);
  if (changes !== null) description.push(changes);
  const embed = {
    title,
    ...(card.url === null ? {} : { url: card.url }),
    ...(description.length === 0 ? {} : { description: description.join("\n\n") }),
    color: Number.parseInt(toneColour[card.tone].slice(1), 16),
    fields,
    footer,
    timestamp: input.envelope.timestamp,
  };
  return {
    contentType: "application/json",
    body: JSON.stringify({ allowed_mentions: { parse: [] }, embeds: [embed] }),
  };
}

/**
 * "What changed" and the links (as masked links) in at most `room` characters: whole lines while they
 * fit, then nothing more. Null when there is nothing to show or no room for its heading.
 */
function changesText(rollout: RolloutCard | null, room: number): string | null {
  if (rollout === null) return null;
  const heading = "**What changed**";
  const parts = [
    ...rollout.lines.map((line) => fitText(line, discordLimits.changeLine, discordMarkdown)),
    ...rollout.links.map(
      (link) =>
        `[${fitText(link.name, discordLimits.changeLine, discordMarkdown)}](${maskedLinkUrl(link.url)})`,
    ),
  ];
  let text = heading;
  for (const part of parts) {
    if (text.length + 1 + part.length > room) break;
    text += `\n${part}`;
  }
  return text === heading || text.length > room ? null : text;
}

/** A masked link's target ends at the first `)`: parentheses in the URL are percent-encoded. */
const maskedLinkUrl = (url: string) => url.replaceAll("(", "%28").replaceAll(")", "%29");
