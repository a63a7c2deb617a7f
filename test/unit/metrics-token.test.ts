import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.js";

// METRICS_TOKEN / METRICS_TOKEN_FILE as loadConfig reads them (the chart mounts the file).

async function tokenFile(content: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), "wo-metrics-token-")), "token");
  await writeFile(file, content);
  return file;
}

describe("the metrics token", () => {
  it("is unset by default: /metrics shows no webhook ids and needs no token", () => {
    expect(loadConfig({}).metrics).toEqual({ token: undefined, cacheMs: 2_000 });
  });

  it("comes from METRICS_TOKEN, or from METRICS_TOKEN_FILE without its surrounding whitespace", async () => {
    expect(loadConfig({ METRICS_TOKEN: "a".repeat(16) }).metrics.token).toBe("a".repeat(16));
    const file = await tokenFile(`  ${"b".repeat(43)}\n`);
    expect(loadConfig({ METRICS_TOKEN_FILE: file }).metrics.token).toBe("b".repeat(43));
  });

  it.each([
    ["a short METRICS_TOKEN", async () => ({ METRICS_TOKEN: "short" }), /METRICS_TOKEN must be at least 16/],
    [
      "both settings",
      async () => ({ METRICS_TOKEN: "a".repeat(16), METRICS_TOKEN_FILE: await tokenFile("b".repeat(16)) }),
      /METRICS_TOKEN_FILE: METRICS_TOKEN is set too/,
    ],
    [
      "a missing file",
      async () => ({ METRICS_TOKEN_FILE: "/nonexistent/metrics-token" }),
      /METRICS_TOKEN_FILE: \/nonexistent\/metrics-token cannot be read \(ENOENT\)/,
    ],
    [
      "a file with a short token",
      async () => ({ METRICS_TOKEN_FILE: await tokenFile("tiny\n") }),
      /must hold a token of at least 16 characters/,
    ],
  ])("refuses %s with a message that names the setting, never the token", async (_name, env, message) => {
    const settings = await env();
    const error = (() => {
      try {
        loadConfig(settings);
      } catch (thrown) {
        return thrown as Error;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toContain("b".repeat(16));
  });
});
