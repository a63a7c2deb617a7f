import { packageJson } from "./package-root.js";

/** The package version, from package.json (src/package-root.ts). */
export const version = packageJson.version ?? "0.0.0";
