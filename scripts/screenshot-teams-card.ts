import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { renderMsTeams } from "../src/formats/msteams.js";
import { launchBrowser } from "../test/support/browser.js";
import { exampleEnvelope } from "./docs/format-examples.js";

// npm run screenshots:teams-card: the Teams card of the docs' example event, rendered by the official
// Adaptive Cards SDK (its browser bundle, from node_modules) in Chromium, photographed into
// docs/screenshots/msteams-card-<kind>.png. The page loads nothing from the network.

const require = createRequire(import.meta.url);
const sdk = readFileSync(require.resolve("adaptivecards/dist/adaptivecards.min.js"), "utf8");
const sdkCss = readFileSync(require.resolve("adaptivecards/dist/adaptivecards.css"), "utf8");

/** Colours and type close to Teams' light theme, so the picture reads as the channel shows it. */
const hostConfig = {
  fontFamily: "'Segoe UI', 'DejaVu Sans', system-ui, sans-serif",
  containerStyles: {
    default: {
      backgroundColor: "#FFFFFF",
      foregroundColors: {
        default: { default: "#242424", subtle: "#616161" },
        good: { default: "#237B4B", subtle: "#237B4B" },
        attention: { default: "#C4314B", subtle: "#C4314B" },
        warning: { default: "#835C00", subtle: "#835C00" },
        accent: { default: "#5B5FC7", subtle: "#5B5FC7" },
      },
    },
  },
  actions: { actionsOrientation: "horizontal", actionAlignment: "left", buttonSpacing: 8 },
};

function page(content: unknown): string {
  return `<!doctype html><html><head><meta charset="utf-8"><style>${sdkCss}
body { margin: 0; padding: 24px; background: #F5F5F5; }
#card { width: 420px; background: #FFFFFF; border-radius: 6px; padding: 16px; box-shadow: 0 1px 3px rgba(0,0,0,.15); }
.ac-pushButton { font-family: inherit; border: 1px solid #D1D1D1; border-radius: 4px; background: #FFF; color: #242424; padding: 6px 12px; font-weight: 600; }
</style><script>${sdk}</script></head><body><div id="card"></div><script>
const card = new AdaptiveCards.AdaptiveCard();
card.hostConfig = new AdaptiveCards.HostConfig(${JSON.stringify(hostConfig)});
card.parse(${JSON.stringify(content)});
document.getElementById("card").appendChild(card.render());
</script></body></html>`;
}

const browser = await launchBrowser();
try {
  const context = await browser.newContext({ viewport: { width: 480, height: 400 }, deviceScaleFactor: 2 });
  for (const kind of ["succeeded", "failed"] as const) {
    const message = JSON.parse(
      renderMsTeams({ envelope: exampleEnvelope(kind), template: null, templateContentType: null }).body,
    );
    const tab = await context.newPage();
    await tab.route("**/*", (route) => route.abort()); // nothing from the network: the card is all inline
    await tab.setContent(page(message.attachments[0].content));
    await tab.locator("#card .ac-adaptiveCard").waitFor();
    const file = new URL(`../docs/screenshots/msteams-card-${kind}.png`, import.meta.url).pathname;
    await tab.locator("#card").screenshot({ path: file });
    console.log(`${file} written`);
    await tab.close();
  }
} finally {
  await browser.close();
}
