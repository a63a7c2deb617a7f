import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { renderConfigurationPage } from "../../scripts/docs/configuration-page.js";
import { configSchema } from "../../src/app/config.js";
import { repoRoot } from "../support/tools.js";

it("docs/configuration.md is what the configuration schema renders (run `npm run docs:config`)", () => {
  const page = readFileSync(path.join(repoRoot, "docs/configuration.md"), "utf8");
  expect(page).toBe(renderConfigurationPage());
});

it("lists every setting the schema parses, each with a description", () => {
  const page = renderConfigurationPage();
  for (const name of Object.keys(configSchema.shape))
    expect(page).toMatch(new RegExp(`^\\| \`${name}\` \\|`, "m"));
});
