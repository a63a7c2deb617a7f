import { describe, expect, it } from "vitest";
import { TooManyRequestsError } from "../../src/errors.js";
import { PreviewAdmission } from "../../src/webhooks/preview-admission.js";

// A project's previews at once (its pace is held by test/integration/template-bounds.test.ts).

/** A preview that renders until `finish` is called. */
function pending() {
  let finish = () => {};
  const done = new Promise<string>((resolve) => {
    finish = () => resolve("rendered");
  });
  return { run: () => done, finish: () => finish() };
}

describe("previews at once", () => {
  it("refuses one over a project's share with 429 and Retry-After 1, and admits it once one ends", async () => {
    const admission = new PreviewAdmission({ perProjectConcurrency: 2, perProjectPerMinute: 0 });
    const [first, second] = [pending(), pending()];
    const running = [admission.within(7, first.run), admission.within(7, second.run)];
    const refused = await admission.within(7, async () => "rendered").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TooManyRequestsError);
    expect(refused).toMatchObject({
      status: 429,
      retryAfterSeconds: 1,
      message:
        "Project 7 already has 2 previews rendering on this replica, its share (PREVIEWS_PER_PROJECT_CONCURRENCY); try again when one has finished. Retry after 1 s.",
    });
    // Another project's previews are its own.
    expect(await admission.within(8, async () => "rendered")).toBe("rendered");
    first.finish();
    expect(await running[0]).toBe("rendered");
    expect(await admission.within(7, async () => "rendered again")).toBe("rendered again");
    second.finish();
    await running[1];
  });

  it("frees the place of a preview that failed", async () => {
    const admission = new PreviewAdmission({ perProjectConcurrency: 1, perProjectPerMinute: 0 });
    await expect(admission.within(7, async () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(await admission.within(7, async () => "rendered")).toBe("rendered");
  });
});
