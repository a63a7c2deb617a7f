import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { withExamples } from "../../../scripts/docs/format-examples.js";
import { templateLimits } from "../../../src/formats/template.js";
import { docSection } from "../../support/docs.js";
import { repoRoot } from "../../support/tools.js";

// docs/formats.md shows real output: its example bodies are what the renderers give for its example
// event, its YAML is a valid resource of the contract's shape, and its limits are the code's.

describe("docs/formats.md", () => {
  it("shows the example bodies the renderers give (run `npm run docs:formats`)", async () => {
    const page = readFileSync(path.join(repoRoot, "docs/formats.md"), "utf8");
    expect(page).toMatch(/<!-- example: msteams -->\n```json\n\{\n {2}"type": "message"/);
    expect(page).toBe(await withExamples(page));
  });

  it("sends to Slack and Teams with five lines of YAML each, the URL from a Secret", () => {
    const { text } = docSection("## Slack and Teams in five lines of YAML");
    const blocks = [...text.matchAll(/```yaml\n([\s\S]*?)```\n/g)].map((match) => match[1] as string);
    expect(blocks).toHaveLength(2);
    const formats = blocks.map((block) => {
      expect(block.trimEnd().split("\n")).toHaveLength(5);
      const resource = parse(block);
      expect(resource).toMatchObject({ apiVersion: "webhook-operator.io/v1alpha1", kind: "Webhook" });
      expect(resource.spec.url).toBeUndefined();
      expect(resource.spec.urlSecretRef).toEqual({ name: "chat-webhooks", key: expect.any(String) });
      expect(resource.spec.events.length).toBeGreaterThan(0);
      return resource.spec.format;
    });
    expect(formats).toEqual(["slack", "msteams"]);
  });

  it("states the template limits the code holds", () => {
    const { text } = docSection("### Limits and errors");
    const n = (value: number) => value.toLocaleString("en-US");
    expect(text).toContain(`| Template size | ${n(templateLimits.sourceChars)} characters |`);
    expect(text).toContain(`| ${templateLimits.nestingDepth} levels |`);
    expect(text).toContain(`| ${templateLimits.renderMs} ms (liquidjs \`renderLimit\`), tried twice |`);
    expect(text).toContain(`| ${n(templateLimits.memory)} (liquidjs \`memoryLimit\``);
    expect(text).toContain(`| ${n(templateLimits.outputBytes)} bytes (256 KiB) |`);
  });
});
