import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.js";

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe("loadConfig", () => {
  it("refuses a delivery lease that cannot cover a send, naming both settings", () => {
    const problem = configError({ DELIVERY_TIMEOUT_MS: "30000", DELIVERY_LEASE_MS: "30000" }).message;
    expect(problem).toContain("DELIVERY_LEASE_MS: 30000 cannot cover a send");
    expect(problem).toContain("DELIVERY_TIMEOUT_MS=30000");
    expect(problem).toContain("at least 41000");
    expect(loadConfig({ DELIVERY_TIMEOUT_MS: "30000", DELIVERY_LEASE_MS: "41000" }).delivery.leaseMs).toBe(
      41_000,
    );
    expect(loadConfig({ DELIVERY_TIMEOUT_MS: "1000", DELIVERY_LEASE_MS: "3000" }).delivery.leaseMs).toBe(
      3_000,
    );
  });

  it("serves the aggregated API only when asked, and then only with a certificate and key", () => {
    expect(loadConfig({}).aggregatedApi).toEqual({ port: 0, certFile: undefined, keyFile: undefined });
    const problem = configError({ AGGREGATED_API_PORT: "8443", AGGREGATED_API_CERT_FILE: "/tls/tls.crt" });
    expect(problem.message).toContain("AGGREGATED_API_PORT: 8443 serves the aggregated API over HTTPS");
    expect(problem.message).toContain("AGGREGATED_API_KEY_FILE");
    const files = { AGGREGATED_API_CERT_FILE: "/tls/tls.crt", AGGREGATED_API_KEY_FILE: "/tls/tls.key" };
    expect(loadConfig({ AGGREGATED_API_PORT: "8443", ...files }).aggregatedApi).toEqual({
      port: 8443,
      certFile: "/tls/tls.crt",
      keyFile: "/tls/tls.key",
    });
  });

  it("refuses DELIVERY_ALLOWED_DESTINATIONS_ONLY without a list, saying what to set", () => {
    expect(configError({ DELIVERY_ALLOWED_DESTINATIONS_ONLY: "true" }).message).toContain(
      "DELIVERY_ALLOWED_DESTINATIONS_ONLY: true lets deliveries reach only what DELIVERY_ALLOWED_DESTINATIONS names",
    );
    const config = loadConfig({
      DELIVERY_ALLOWED_DESTINATIONS_ONLY: "true",
      DELIVERY_ALLOWED_DESTINATIONS: "127.77.0.1",
    });
    expect(config.delivery.allowedDestinationsOnly).toBe(true);
  });

  it("takes WEBHOOKS_PER_PROJECT_LIMIT (default 100) and refuses one below 1, naming it", () => {
    expect(loadConfig({}).webhooksPerProjectLimit).toBe(100);
    expect(loadConfig({ WEBHOOKS_PER_PROJECT_LIMIT: "5" }).webhooksPerProjectLimit).toBe(5);
    expect(configError({ WEBHOOKS_PER_PROJECT_LIMIT: "0" }).message).toContain("WEBHOOKS_PER_PROJECT_LIMIT");
  });

  it("watches Deployments, StatefulSets and DaemonSets unless WATCH_WORKLOAD_KINDS says otherwise", () => {
    expect(loadConfig({}).kubernetes.workloadKinds).toEqual(["Deployment", "StatefulSet", "DaemonSet"]);
    expect(
      loadConfig({ WATCH_WORKLOAD_KINDS: " DaemonSet ,Deployment,DaemonSet" }).kubernetes.workloadKinds,
    ).toEqual(["DaemonSet", "Deployment"]);
    expect(configError({ WATCH_WORKLOAD_KINDS: "Deployment,CronJob" }).message).toContain(
      "WATCH_WORKLOAD_KINDS: unknown kind CronJob",
    );
    expect(configError({ WATCH_WORKLOAD_KINDS: " , " }).message).toContain(
      "WATCH_WORKLOAD_KINDS: name at least one",
    );
  });

  it("opens only labelled Secrets to Webhooks unless WEBHOOK_SECRETS_WITHOUT_LABEL lists more", () => {
    expect(loadConfig({}).kubernetes.secretsWithoutLabel).toEqual([]);
    expect(
      loadConfig({ WEBHOOK_SECRETS_WITHOUT_LABEL: " shop/api-token, team-a/* ," }).kubernetes
        .secretsWithoutLabel,
    ).toEqual(["shop/api-token", "team-a/*"]);
    expect(loadConfig({ WEBHOOK_SECRETS_WITHOUT_LABEL: "*" }).kubernetes.secretsWithoutLabel).toEqual(["*"]);
    expect(configError({ WEBHOOK_SECRETS_WITHOUT_LABEL: "shop/api,api-token,*/x" }).message).toContain(
      'WEBHOOK_SECRETS_WITHOUT_LABEL: "api-token", "*/x": write namespace/name, namespace/* or *',
    );
  });

  it("applies the documented defaults to an empty environment", () => {
    expect(loadConfig({})).toMatchObject({
      http: {
        host: "0.0.0.0",
        port: 8080,
        bounds: {
          maxConnections: 4096,
          headersTimeoutMs: 10_000,
          requestTimeoutMs: 30_000,
          keepAliveTimeoutMs: 5_000,
        },
        authFailuresPerMinute: 60,
      },
      logLevel: "info",
      database: { url: undefined, poolSize: 10, dataDir: ".data", embeddedPort: 5433 },
      apiKey: { value: undefined, file: undefined },
      // Long enough for a send in flight to finish: 30 s timeout + 10 s connect + 1 s + 5 s.
      shutdownTimeoutMs: 46_000,
      retentionDays: 30,
      delivery: {
        concurrency: 64,
        timeoutMs: 30_000,
        leaseMs: 60_000,
        pollIntervalMs: 2_000,
        responseBodyLimitBytes: 4_096,
        allowPrivateNetworks: true,
      },
    });
  });

  it("takes RETENTION_DAYS=0 as keep everything and refuses what is not a number of days", () => {
    expect(loadConfig({ RETENTION_DAYS: "0" }).retentionDays).toBe(0);
    expect(loadConfig({ RETENTION_DAYS: "7" }).retentionDays).toBe(7);
    expect(configError({ RETENTION_DAYS: "2w" }).message).toContain("RETENTION_DAYS: must be a whole number");
  });

  it("reads and converts set values", () => {
    const config = loadConfig({
      HOST: "127.0.0.1",
      PORT: "9000",
      LOG_LEVEL: "debug",
      DATABASE_URL: "postgres://u:p@db.example:5432/wo",
      DATABASE_POOL_SIZE: "3",
      API_KEY: "0123456789abcdef0123456789abcdef",
      API_KEY_FILE: "/run/secrets/api-key",
      DELIVERY_TIMEOUT_MS: "5000",
      DELIVERY_ALLOW_PRIVATE_NETWORKS: "false",
    });
    expect(config.http).toMatchObject({ host: "127.0.0.1", port: 9000 });
    expect(config.logLevel).toBe("debug");
    expect(config.database).toMatchObject({ url: "postgres://u:p@db.example:5432/wo", poolSize: 3 });
    expect(config.apiKey).toEqual({
      value: "0123456789abcdef0123456789abcdef",
      file: "/run/secrets/api-key",
    });
    expect(config.delivery.timeoutMs).toBe(5000);
    expect(config.delivery.allowPrivateNetworks).toBe(false);
    expect(loadConfig({ DATABASE_URL: "postgresql://h/db" }).database.url).toBe("postgresql://h/db");
  });

  it.each([
    ["true", true],
    ["1", true],
    ["yes", true],
    ["false", false],
    ["0", false],
    ["no", false],
  ])("reads DELIVERY_ALLOW_PRIVATE_NETWORKS=%s as %s", (value, expected) => {
    expect(loadConfig({ DELIVERY_ALLOW_PRIVATE_NETWORKS: value }).delivery.allowPrivateNetworks).toBe(
      expected,
    );
  });

  it.each([
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["PORT", "80.5"],
    ["DATABASE_URL", "http://x"],
    ["DATABASE_URL", "not a url"],
    ["DELIVERY_ALLOW_PRIVATE_NETWORKS", "maybe"],
    ["LOG_LEVEL", "verbose"],
    ["DATABASE_POOL_SIZE", "0"],
    ["API_KEY", "short"],
    ["DELIVERY_ALLOWED_DESTINATIONS", "10.0.0.0/33"],
    ["DELIVERY_ALLOWED_DESTINATIONS", "http://svc.local"],
  ])("rejects %s=%s with a ConfigError naming the variable", (name, value) => {
    const error = configError({ [name]: value });
    expect(error.message).toContain(name);
  });

  it.each([
    ["0123456789abcdef", "is 16 characters long; it must have at least 24"],
    ["x".repeat(64), "repeats too few different characters (about 0 bits"],
  ])("refuses API_KEY=%s as weak, saying how to make a strong one and not quoting it", (key, why) => {
    const error = configError({ API_KEY: key });
    expect(error.message).toContain(`API_KEY: the key ${why}`);
    expect(error.message).toContain("openssl rand -hex 24");
    expect(error.message).not.toContain(key);
  });

  it("accepts an API_KEY of 24 random hex characters or more", () => {
    const key = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c"; // openssl rand -hex 24
    expect(loadConfig({ API_KEY: key }).apiKey.value).toBe(key);
  });

  it("refuses a header timeout longer than the request timeout that contains it", () => {
    expect(configError({ HTTP_HEADERS_TIMEOUT_MS: "40000" }).message).toContain(
      "HTTP_HEADERS_TIMEOUT_MS: 40000 is longer than HTTP_REQUEST_TIMEOUT_MS (30000)",
    );
  });

  it("reads DELIVERY_ALLOWED_DESTINATIONS as a comma-separated allow-list", () => {
    const { allowedDestinations } = loadConfig({
      DELIVERY_ALLOWED_DESTINATIONS: " 10.96.0.0/12, ,fd00::1,.svc.cluster.local ",
    }).delivery;
    expect(allowedDestinations?.entries).toEqual(["10.96.0.0/12", "fd00::1", ".svc.cluster.local"]);
    expect(allowedDestinations?.list.networks.check("10.100.1.1", "ipv4")).toBe(true);
    expect(allowedDestinations?.list.hostnames).toEqual([".svc.cluster.local"]);
    expect(configError({ DELIVERY_ALLOWED_DESTINATIONS: "a b" }).message).toContain(
      '"a b" is neither a CIDR, an IP address nor a host name',
    );
  });

  it("names every bad variable in one error", () => {
    const error = configError({
      PORT: "abc",
      DATABASE_URL: "http://x",
      DELIVERY_ALLOW_PRIVATE_NETWORKS: "maybe",
    });
    const lines = error.message.split("\n");
    for (const name of ["PORT", "DATABASE_URL", "DELIVERY_ALLOW_PRIVATE_NETWORKS"]) {
      expect(lines.some((line) => line.trim().startsWith(`${name}:`))).toBe(true);
    }
    expect(error.message).not.toMatch(/HOST|LOG_LEVEL/);
  });

  it("treats empty strings as unset", () => {
    const config = loadConfig({
      PORT: "",
      HOST: "",
      DATABASE_URL: "",
      API_KEY: "",
      API_KEY_FILE: "",
      LOG_LEVEL: "",
      DELIVERY_ALLOW_PRIVATE_NETWORKS: "",
    });
    expect(config.http).toMatchObject({ host: "0.0.0.0", port: 8080 });
    expect(config.database.url).toBeUndefined();
    expect(config.apiKey).toEqual({ value: undefined, file: undefined });
    expect(config.logLevel).toBe("info");
    expect(config.delivery.allowPrivateNetworks).toBe(true);
  });

  it("ignores unrelated environment variables", () => {
    expect(loadConfig({ PATH: "/usr/bin", HOME: "/root" }).http.port).toBe(8080);
  });
});
