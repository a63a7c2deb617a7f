import { cardFacts, cardTitle, deploymentCard, toneColour } from "./deployment-card.js";
import { failureSection, failureSectionTitle } from "./failure-section.js";
import { rolloutCard } from "./rollout-card.js";
import { type CharEscape, fitText, noEscape } from "./text-limits.js";
import type { FormatInput, RenderedBody } from "./types.js";

/**
 * Google Chat documents a message of at most 32,000 bytes and a card of at most 100 widgets; our card
 * has at most 13 widgets and the cuts keep it below a quarter of that size. Card text fields take a
 * small HTML subset (`<b>`, `<font color>`, `<a href>`, `<br>` …), so user text is HTML-escaped; cards
 * carry no mentions (those exist only in a message's plain `text`, which this body does not use).
 */
export const googleChatLimits = {
  messageBytes: 32_000,
  widgets: 100,
  /** Ours, counted on the escaped text. */
  title: 200,
  factValue: 200,
  commitSubject: 300,
  errorMessage: 2000,
  failure: 2000,
  changeLine: 200,
} as const;

const html: CharEscape = (char) =>
  char === "&"
    ? "&amp;"
    : char === "<"
      ? "&lt;"
      : char === ">"
        ? "&gt;"
        : char === '"'
          ? "&quot;"
          : char === "\n"
            ? "<br>"
            : char;

/** An incoming-webhook message holding one `cardsV2` card. */
export function renderGoogleChat(input: FormatInput): RenderedBody {
  const card = deploymentCard(input.envelope);
  const colour = toneColour[card.tone];
  const widgets: object[] = cardFacts(card).map((fact) => {
    const value = fitText(fact.value, googleChatLimits.factValue, fact.ours ? noEscape : html);
    return {
      decoratedText: {
        topLabel: fact.label,
        text: fact.label === "Status" ? `<font color="${colour}"><b>${value}</b></font>` : value,
      },
    };
  });
  if (card.commitSubject !== null) {
    const subject = fitText(card.commitSubject, googleChatLimits.commitSubject, html);
    widgets.push({ textParagraph: { text: `<b>Commit message</b><br>${subject}` } });
  }
  if (card.errorMessage !== null) {
    const error = fitText(card.errorMessage, googleChatLimits.errorMessage, html);
    widgets.push({
      textParagraph: { text: `<font color="${toneColour.bad}"><b>Error</b></font><br>${error}` },
    });
  }
  const why = failureSection(input.rollout);
  if (why !== null) {
    const text = fitText(why, googleChatLimits.failure, html);
    widgets.push({
      textParagraph: {
        text: `<font color="${toneColour.bad}"><b>${failureSectionTitle}</b></font><br>${text}`,
      },
    });
  }
  const rollout = rolloutCard(input.rollout);
  if (rollout !== null && rollout.lines.length > 0) {
    const lines = rollout.lines.map((line) => fitText(line, googleChatLimits.changeLine, html));
    widgets.push({ textParagraph: { text: `<b>What changed</b><br>${lines.join("<br>")}` } });
  }
  const buttons = [
    ...(card.url === null ? [] : [{ text: "Open deployment", url: card.url }]),
    ...(rollout?.links ?? []).map((link) => ({ text: link.name, url: link.url })),
  ];
  if (buttons.length > 0) {
    widgets.push({
      buttonList: { buttons: buttons.map((b) => ({ text: b.text, onClick: { openLink: { url: b.url } } })) },
    });
  }
  const message = {
    cardsV2: [
      {
        cardId: "deployment",
        card: {
          header: {
            title: fitText(cardTitle(card), googleChatLimits.title),
            subtitle: `${card.eventType} · event ${card.eventId}`,
          },
          sections: [{ widgets }],
        },
      },
    ],
  };
  return { contentType: "application/json", body: JSON.stringify(message) };
}
