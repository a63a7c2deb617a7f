import { configDefaults, defineConfig } from "vitest/config";
import { reporters } from "./test/support/result-files.js";
import { integrationProject } from "./vitest.config.js";

// `npm run test:postgres`: the integration files again, on the server DATABASE_URL names, but for
// those whose outcome cannot depend on which Postgres it is. `.ci/run` runs it on PostgreSQL 15 (the
// oldest the service supports) after `npm test` ran everything on the embedded PostgreSQL 18.
//
// The rule (docs/development.md, "Which tests run on PostgreSQL 15"): a file runs on both servers
// unless it is listed here, and it is listed only when what it asserts is decided by Node (HTTP
// framing and validation, the CLI, docs, the build, the chart, a process's memory) and any SQL it
// reaches is run, and proven, by a file that is not listed. New files run on both until listed.
export const serverIndependent = [
  // The built bundle, the package and the build's stamps.
  "test/integration/build-stamps.test.ts",
  "test/integration/server-bundle.test.ts",
  "test/integration/verify-package.test.ts",
  // The CLI against the API (its SQL is the API's, proven by the stores' and deliveries' files).
  "test/integration/cli*.test.ts",
  "test/integration/serve.test.ts",
  // Always the embedded server, whatever DATABASE_URL says.
  "test/integration/embedded-postgres-*.test.ts",
  // HTTP: framing, bounds, validation, errors, authentication by token, the dashboard's files.
  "test/integration/custom-headers-logs.test.ts",
  "test/integration/dashboard-serving.test.ts",
  "test/integration/hostile-input.test.ts",
  "test/integration/http-bounds.test.ts",
  "test/integration/internal-errors.test.ts",
  "test/integration/kubernetes-token-auth.test.ts",
  "test/integration/service-info.test.ts",
  "test/integration/sync-send-bounds.test.ts",
  "test/integration/webhooks-validation.test.ts",
  // The API's description and the docs' examples, receivers in three languages.
  "test/integration/openapi*.test.ts",
  "test/integration/readme.test.ts",
  "test/integration/receivers.test.ts",
  // /metrics and the alerts (the queue gauges' SQL: metrics-queue-gauges.test.ts).
  "test/integration/metrics-endpoint.test.ts",
  "test/integration/monitoring.test.ts",
  // helm, promtool, git and a child Node process: no database at all.
  "test/integration/ci-tally.test.ts",
  "test/integration/chart*.test.ts",
  "test/integration/monitoring-rules.test.ts",
  "test/integration/idle-memory.test.ts",
  "test/integration/release-line.test.ts",
  "test/integration/upgrading-doc.test.ts",
];

export default defineConfig({
  test: {
    ...integrationProject,
    name: "postgres",
    reporters: reporters("postgres"),
    exclude: [...configDefaults.exclude, ...serverIndependent],
  },
});
