import { readFileSync, writeFileSync } from "node:fs";
import { withExamples } from "./format-examples.js";

// npm run docs:formats: rewrites the example bodies of docs/formats.md from the renderers.
const page = new URL("../../docs/formats.md", import.meta.url);
writeFileSync(page, await withExamples(readFileSync(page, "utf8")));
console.log("docs/formats.md examples written");
