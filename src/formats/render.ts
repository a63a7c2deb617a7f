import { renderCloudEvent } from "./cloudevents.js";
import { renderDiscord } from "./discord.js";
import { renderGoogleChat } from "./googlechat.js";
import { renderMsTeams } from "./msteams.js";
import { renderSlack } from "./slack.js";
import { renderTemplate } from "./template.js";
import { type DeliveryFormat, type FormatInput, RenderError, type RenderedBody } from "./types.js";

/**
 * The body a webhook's format makes of a recorded event, with its Content-Type and the format's own
 * headers. `envelope` is the event's stored text itself, the default path's body byte for byte (the
 * engine does not call this for envelope deliveries; previews do).
 */
export async function renderBody(
  format: DeliveryFormat,
  input: FormatInput,
  options: { cloudeventsMode: "structured" | "binary" },
): Promise<RenderedBody> {
  switch (format) {
    case "envelope":
      return { contentType: "application/json", body: JSON.stringify(input.envelope) };
    case "cloudevents":
      return renderCloudEvent(input.envelope, options.cloudeventsMode);
    case "slack":
      return renderSlack(input);
    case "msteams":
      return renderMsTeams(input);
    case "discord":
      return renderDiscord(input);
    case "googlechat":
      return renderGoogleChat(input);
    case "template":
      return renderTemplate(input);
    default:
      // A row written by a newer version that knows more formats: recorded as not sent, never guessed.
      throw new RenderError(`unknown format ${JSON.stringify(String(format).slice(0, 40))}`);
  }
}
