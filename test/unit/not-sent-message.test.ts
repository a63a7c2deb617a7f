import { describe, expect, it } from "vitest";
import { notRenderedMessage } from "../../src/delivery-engine/shaped-send.js";
import { createEnvelope } from "../../src/formats/envelope.js";
import { renderBody } from "../../src/formats/render.js";
import { RenderError } from "../../src/formats/types.js";

// A delivery whose body could not be rendered records why, in one sentence that says once that
// nothing was sent ("Not sent: …"), whatever the renderer's own message ends with.

async function renderFailure(template: string): Promise<RenderError> {
  const envelope = createEnvelope("deployment.succeeded", 1, { environment: "production" });
  try {
    await renderBody(
      "template",
      { envelope, template, templateContentType: null },
      { cloudeventsMode: "structured" },
    );
  } catch (error) {
    if (error instanceof RenderError) return error;
    throw error;
  }
  throw new Error("the template rendered");
}

describe("the record of a body that could not be rendered", () => {
  it("says that nothing was sent once", async () => {
    const error = await renderFailure('{"text": {{ event.payload.environment }}}');
    expect(error.message).toMatch(/Nothing was sent\.$/);
    const message = notRenderedMessage("template", error);
    expect(message).toMatch(
      /^Not sent: the template body could not be rendered: The template's output is not valid JSON( \(at (position \d+|line \d+ column \d+)\))?, and the webhook declares application\/json\.$/,
    );
    expect(message).not.toContain("Nothing was sent");
  });

  it("quotes a renderer's message that does not end so as it is", () => {
    expect(notRenderedMessage("future-format", new RenderError('unknown format "future-format"'))).toBe(
      'Not sent: the future-format body could not be rendered: unknown format "future-format"',
    );
  });
});
