import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

// The dashboard's own Vite root; `npm run build` writes it to dist/dashboard, which the service serves.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL("../dist/dashboard", import.meta.url)),
    emptyOutDir: true,
    // The polyfill would be the only inline script; every browser the dashboard targets has modulepreload.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
