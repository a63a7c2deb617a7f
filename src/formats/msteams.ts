import { cardFacts, cardTitle, type DeploymentCard, deploymentCard, type Tone } from "./deployment-card.js";
import { failureSection, failureSectionTitle } from "./failure-section.js";
import { type RolloutCard, rolloutCard } from "./rollout-card.js";
import { fitText } from "./text-limits.js";
import type { FormatInput, RenderedBody } from "./types.js";

/**
 * Teams takes a message of about 28 KB at most (its documented bound for cards sent to a channel); the
 * cuts here keep the worst case well below it. Every text a user controls goes into a RichTextBlock's
 * TextRun, which Adaptive Cards renders without Markdown and without the {{DATE()}} functions of
 * TextBlock, so a commit message cannot turn into a link or formatting.
 */
export const msTeamsLimits = {
  title: 200,
  factValue: 200,
  commitSubject: 300,
  errorMessage: 2000,
  /** "Why it failed": with What changed in the worst case the card stays below 28 KB (UTF-16). */
  failure: 1000,
  changeLine: 200,
} as const;

/** The Adaptive Card schema version: 1.4 renders in every Teams client (desktop, web and mobile). */
export const adaptiveCardVersion = "1.4";

const toneColour: Record<Tone, string> = {
  good: "Good",
  bad: "Attention",
  progress: "Warning",
  info: "Accent",
  neutral: "Default",
};

/**
 * The message shape Teams Workflows webhooks ("When a Teams webhook request is received") post to a
 * channel: a `message` with one Adaptive Card attachment.
 */
export function renderMsTeams(input: FormatInput): RenderedBody {
  const card = deploymentCard(input.envelope);
  const rollout = rolloutCard(input.rollout);
  const message = {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: adaptiveCard(card, rollout, failureSection(input.rollout)),
      },
    ],
  };
  return { contentType: "application/json", body: JSON.stringify(message) };
}

/** `whyItFailed`: the "Why it failed" section's text (failure-section.ts), shown a line per block. */
export function adaptiveCard(
  card: DeploymentCard,
  rollout: RolloutCard | null = null,
  whyItFailed: string | null = null,
): object {
  const body: object[] = [
    richText([
      run(fitText(cardTitle(card), msTeamsLimits.title), {
        size: "Medium",
        weight: "Bolder",
        color: toneColour[card.tone],
      }),
    ]),
    ...cardFacts(card).map((fact) =>
      richText([
        run(`${fact.label}: `, { weight: "Bolder" }),
        run(fitText(fact.value, msTeamsLimits.factValue)),
      ]),
    ),
  ];
  if (card.commitSubject !== null) {
    body.push(
      richText(
        [
          run("Commit message: ", { weight: "Bolder" }),
          run(fitText(card.commitSubject, msTeamsLimits.commitSubject)),
        ],
        "Medium",
      ),
    );
  }
  if (card.errorMessage !== null) {
    body.push(
      richText(
        [
          run("Error: ", { weight: "Bolder", color: "Attention" }),
          run(fitText(card.errorMessage, msTeamsLimits.errorMessage), { color: "Attention" }),
        ],
        "Medium",
      ),
    );
  }
  if (whyItFailed !== null) {
    body.push(richText([run(failureSectionTitle, { weight: "Bolder", color: "Attention" })], "Medium"));
    for (const line of fitText(whyItFailed, msTeamsLimits.failure).split("\n"))
      body.push(richText([run(line || " ")], "None"));
  }
  if (rollout !== null && rollout.lines.length > 0) {
    body.push(richText([run("What changed", { weight: "Bolder" })], "Medium"));
    for (const line of rollout.lines) body.push(richText([run(fitText(line, msTeamsLimits.changeLine))]));
  }
  body.push(
    richText([run(`${card.eventType} · event ${card.eventId}`, { isSubtle: true, size: "Small" })], "Medium"),
  );
  const actions = [
    ...(card.url === null ? [] : [{ type: "Action.OpenUrl", title: "Open deployment", url: card.url }]),
    ...(rollout?.links ?? []).map((link) => ({ type: "Action.OpenUrl", title: link.name, url: link.url })),
  ];
  return {
    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
    type: "AdaptiveCard",
    version: adaptiveCardVersion,
    body,
    ...(actions.length === 0 ? {} : { actions }),
  };
}

function richText(inlines: object[], spacing?: "None" | "Medium"): object {
  return { type: "RichTextBlock", inlines, ...(spacing === undefined ? {} : { spacing }) };
}

function run(text: string, style: Record<string, string | boolean> = {}): object {
  return { type: "TextRun", text, ...style };
}
