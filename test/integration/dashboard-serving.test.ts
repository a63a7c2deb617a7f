import { readdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findDashboardDir } from "../../src/app/dashboard.js";
import { assertBuilt } from "../support/cli.js";
import { startTestService, type TestService } from "../support/service.js";

// The dashboard served by the API's own process: deep links answer the page, hashed assets are
// immutable, the page is never cached, the CSP forbids inline script, nothing comes from elsewhere,
// and DASHBOARD_ENABLED=false leaves /api alone.

let service: TestService;
const html = { accept: "text/html,application/xhtml+xml" };

beforeAll(async () => {
  assertBuilt();
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

const get = (path: string, headers: Record<string, string> = html) =>
  fetch(`${service.baseUrl}${path}`, { headers });

function assetsOf(page: string): string[] {
  return [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
}

describe("the page", () => {
  it.each(["/", "/sign-in", "/projects", "/projects/1/settings/webhooks/2/deliveries/9"])(
    "answers %s with the page, not cached, under a CSP without inline script",
    async (path) => {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      expect(response.headers.get("cache-control")).toBe("no-cache");
      const csp = response.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).not.toContain("unsafe-eval");
      const page = await response.text();
      expect(page).toContain('<div id="app">');
      // Every script is a file of this origin: none inline, none from a CDN.
      expect(
        [...page.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].every((m) => m[1]?.trim() === ""),
      ).toBe(true);
      expect(page).not.toMatch(/<style\b/);
      for (const asset of assetsOf(page)) expect(asset).toMatch(/^\/[^/]/);
    },
  );

  it("leaves /api, /api/docs and non-HTML requests to the API's JSON answers", async () => {
    expect((await get("/api/projects")).status).toBe(401);
    expect((await get("/api/docs", {})).headers.get("content-type")).toMatch(/json/);
    const unknown = await get("/unknown", { accept: "application/json" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      error: { code: "not_found", message: "No endpoint GET /unknown." },
    });
  });
});

describe("the assets", () => {
  it("are content-hashed and cached immutably for a year", async () => {
    const page = await (await get("/")).text();
    const scripts = assetsOf(page).filter((asset) => asset.startsWith("/assets/"));
    expect(scripts.length).toBeGreaterThanOrEqual(2);
    for (const asset of scripts) {
      expect(asset).toMatch(/^\/assets\/[\w-]+-[\w-]{8}\.(js|css)$/);
      const response = await get(asset, {});
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    }
  });

  it("answers an asset of another build 404, not the page", async () => {
    const response = await get("/assets/index-00000000.js", {});
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toContain("reload the page");
  });

  it("ships less than 150 KB of gzipped JavaScript, loading nothing from another origin", () => {
    const dir = `${findDashboardDir()}/assets`;
    const scripts = readdirSync(dir).filter((file) => file.endsWith(".js"));
    const gzipped = scripts.reduce((sum, file) => sum + gzipSync(readFileSync(`${dir}/${file}`)).length, 0);
    console.log(`dashboard JavaScript: ${scripts.length} file(s), ${(gzipped / 1024).toFixed(1)} KB gzipped`);
    expect(gzipped).toBeLessThan(150 * 1024);
    for (const file of scripts)
      expect(readFileSync(`${dir}/${file}`, "utf8")).not.toMatch(/import\(["']https?:/);
  });
});

it("is not served with DASHBOARD_ENABLED=false", async () => {
  const apiOnly = await startTestService({ DASHBOARD_ENABLED: "false" });
  try {
    const response = await fetch(`${apiOnly.baseUrl}/projects`, { headers: html });
    expect(response.status).toBe(404);
    expect((await fetch(`${apiOnly.baseUrl}/assets/x.js`)).status).toBe(404);
    expect((await apiOnly.api("GET", "/projects")).status).toBe(200);
  } finally {
    await apiOnly.close();
  }
});
