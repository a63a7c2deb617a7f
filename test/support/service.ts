import type { KubeConfig } from "@kubernetes/client-node";
import { loadConfig } from "../../src/app/config.js";
import { startService } from "../../src/app/service.js";
import type { Pool } from "../../src/db/pool.js";
import type { DeliveryEngine } from "../../src/delivery-engine/engine.js";
import { createLogger, type Logger } from "../../src/logger.js";
import type { RunningOperator } from "../../src/operator/operator.js";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { testSecretKey } from "./secret-keys.js";

export interface TestService {
  baseUrl: string;
  adminKey: string;
  pool: Pool;
  engine: DeliveryEngine;
  operator: RunningOperator | undefined;
  /** Calls /api with a JSON body (or raw text) and the admin key unless another key (or null) is given. */
  api(method: string, path: string, options?: ApiCallOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiCallOptions {
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  key?: string | null;
}

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response JSON of many shapes
  body: any;
  text: string;
  headers: Headers;
}

const adminKey = "test-admin-key-0123456789";

/**
 * The real service (startService) on a loopback port, against a fresh database for this test file
 * (or `options.database`). Without `options.kubeConfig` no controller runs, whatever ~/.kube holds.
 */
export async function startTestService(
  env: Record<string, string> = {},
  options: { kubeConfig?: KubeConfig; database?: TestDatabase; logger?: Logger } = {},
): Promise<TestService> {
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL: database.url,
    API_KEY: adminKey,
    SECRET_ENCRYPTION_KEYS: testSecretKey,
    HOST: "127.0.0.1",
    PORT: "0",
    // TEST_LOG_LEVEL=warn (or info, debug) prints the service's own log lines beside the tests.
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    // A scrape right after an action sees it; test/integration/metrics-endpoint.test.ts covers the reuse.
    METRICS_CACHE_MS: "0",
    ...env,
  });
  const service = await startService(config, options.logger ?? createLogger(config.logLevel), {
    kubeConfig: options.kubeConfig,
  });
  const api = async (method: string, path: string, options: ApiCallOptions = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = {};
    const key = options.key === undefined ? adminKey : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
    const response = await fetch(`${service.url}/api${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
  };
  return {
    baseUrl: service.url,
    adminKey,
    pool: service.pool,
    engine: service.engine,
    operator: service.operator,
    api,
    close: async () => {
      await service.close();
      if (!options.database) await database.drop();
    },
  };
}
