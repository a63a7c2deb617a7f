// Slack's own TypeScript types of Block Kit (a devDependency: types only, erased from the build), so the
// compiler holds every block to the shape Slack publishes.
import type { HeaderBlock, KnownBlock, MessageAttachment } from "@slack/types";
import { cardFacts, cardTitle, deploymentCard, toneColour } from "./deployment-card.js";
import { failureSection, failureSectionTitle } from "./failure-section.js";
import { rolloutCard } from "./rollout-card.js";
import { type CharEscape, fitText, noEscape } from "./text-limits.js";
import type { FormatInput, RenderedBody } from "./types.js";

/**
 * Slack's documented Block Kit limits (docs.slack.dev, Block Kit reference): a header's plain text 150
 * characters, a section's text 3000, a section's fields 10 of 2000 each, a button's text 75 and its
 * URL 3000, 50 blocks in a message. Our card stays far below the block count (at most 6).
 */
export const slackLimits = {
  headerText: 150,
  sectionText: 3000,
  fields: 10,
  fieldText: 2000,
  buttonText: 75,
  blocks: 50,
  /** Ours: a commit subject or a fact longer than this is cut, so the card stays readable. */
  factValue: 200,
  commitSubject: 300,
  errorMessage: 2000,
  /** The "Why it failed" section, below a section's 3000 with its heading. */
  failure: 2800,
  /** Ours: each line of "What changed" (5 images and 3 more lines: within a section's 3000). */
  changeLine: 200,
} as const;

/** mrkdwn: `&`, `<` and `>` are the control characters; escaped, `<!channel>` or `<@U123>` is just text. */
const mrkdwn: CharEscape = (char) =>
  char === "&" ? "&amp;" : char === "<" ? "&lt;" : char === ">" ? "&gt;" : char;

/**
 * A Slack incoming webhook message: `text` is the notification and fallback, the header block the
 * title, and the rest sits in an attachment whose colour bar shows the status.
 */
export function renderSlack(input: FormatInput): RenderedBody {
  const card = deploymentCard(input.envelope);
  const title = cardTitle(card);
  const details: KnownBlock[] = [
    {
      type: "section",
      fields: cardFacts(card)
        .slice(0, slackLimits.fields)
        .map((fact) => ({
          type: "mrkdwn",
          text: `*${fact.label}*\n${fitText(fact.value, slackLimits.factValue, fact.ours ? noEscape : mrkdwn)}`,
        })),
    },
  ];
  if (card.commitSubject !== null) {
    const subject = fitText(card.commitSubject, slackLimits.commitSubject, mrkdwn);
    details.push({ type: "section", text: { type: "mrkdwn", text: `*Commit message*\n${subject}` } });
  }
  if (card.errorMessage !== null) {
    const error = fitText(card.errorMessage, slackLimits.errorMessage, mrkdwn);
    details.push({ type: "section", text: { type: "mrkdwn", text: `*Error*\n${error}` } });
  }
  const why = failureSection(input.rollout);
  if (why !== null) {
    const text = `*${failureSectionTitle}*\n${fitText(why, slackLimits.failure, mrkdwn)}`;
    details.push({ type: "section", text: { type: "mrkdwn", text } });
  }
  const rollout = rolloutCard(input.rollout);
  if (rollout !== null && rollout.lines.length > 0) {
    const lines = rollout.lines.map((line) => fitText(line, slackLimits.changeLine, mrkdwn));
    details.push({ type: "section", text: { type: "mrkdwn", text: `*What changed*\n${lines.join("\n")}` } });
  }
  const buttons = [
    ...(card.url === null ? [] : [{ text: "Open deployment", url: card.url }]),
    ...(rollout?.links ?? []).map((link) => ({
      text: fitText(link.name, slackLimits.buttonText),
      url: link.url,
    })),
  ];
  if (buttons.length > 0) {
    details.push({
      type: "actions",
      elements: buttons.map((b) => ({
        type: "button",
        text: { type: "plain_text", text: b.text },
        url: b.url,
      })),
    });
  }
  details.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: `${card.eventType} · event ${card.eventId}` }],
  });
  const header: HeaderBlock = {
    type: "header",
    text: { type: "plain_text", text: fitText(title, slackLimits.headerText) },
  };
  const attachment: MessageAttachment = { color: toneColour[card.tone], blocks: details };
  const message = {
    text: fitText(title, slackLimits.headerText, mrkdwn),
    blocks: [header],
    attachments: [attachment],
  };
  return { contentType: "application/json", body: JSON.stringify(message) };
}
