import { writeFileSync } from "node:fs";
import { renderConfigurationPage } from "./configuration-page.js";

// npm run docs:config: rewrites docs/configuration.md from the configuration schema.
writeFileSync(new URL("../../docs/configuration.md", import.meta.url), renderConfigurationPage());
console.log("docs/configuration.md written");
