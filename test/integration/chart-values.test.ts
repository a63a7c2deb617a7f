import { describe, expect, it } from "vitest";
import { parseLinkTemplates } from "../../src/operator/rollouts/rollout-links.js";
import {
  type KubeObject,
  kindsOf,
  needing,
  only,
  releaseNamespace,
  renderChart,
  templateChart,
} from "../support/chart.js";
import { locateHelm } from "../support/tools.js";

// The chart's switches, and values it refuses: values.schema.json and templates/_validate.tpl must stop
// a bad install with a message that says what to change.

const helm = locateHelm();

function render(set: Record<string, string> = {}): KubeObject[] {
  return renderChart(helm.path as string, { set });
}

describe.skipIf(!helm.path)(needing("chart values", helm), { timeout: 60_000 }, () => {
  describe("toggles", () => {
    it("adds each monitoring object on its own", () => {
      expect(kindsOf(render({ "serviceMonitor.enabled": "true" }))).toContain("ServiceMonitor");
      expect(kindsOf(render({ "prometheusRule.enabled": "true" }))).toContain("PrometheusRule");
      const dashboard = render({ "grafanaDashboard.enabled": "true" });
      expect(only(dashboard, "ConfigMap").metadata.namespace).toBe(releaseNamespace);
    });

    it("keeps a stopping replica serving shutdownDelaySeconds before SIGTERM, within the grace period", () => {
      const operator = (objects: KubeObject[]) => {
        const pod = only(objects, "Deployment").spec.template.spec;
        return { grace: pod.terminationGracePeriodSeconds, lifecycle: pod.containers[0].lifecycle };
      };
      expect(operator(render())).toEqual({
        grace: 55,
        lifecycle: { preStop: { exec: { command: ["sleep", "5"] } } },
      });
      expect(operator(render({ shutdownDelaySeconds: "0" })).lifecycle).toBeUndefined();
    });

    it("passes config.rolloutLinks as ROLLOUT_LINKS, JSON the operator parses ([] when unset)", () => {
      const env = (objects: KubeObject[]) =>
        only(objects, "Deployment").spec.template.spec.containers[0].env.find(
          (e: KubeObject) => e.name === "ROLLOUT_LINKS",
        );
      expect(parseLinkTemplates(env(render()).value)).toEqual([]);
      const url = "https://grafana.example/d/x?var-namespace={namespace}&var-workload={name}";
      const set = env(
        render({ "config.rolloutLinks[0].name": "Grafana", "config.rolloutLinks[0].url": url }),
      );
      expect(parseLinkTemplates(set.value)).toEqual([{ name: "Grafana", url }]);
    });

    it("leaves out the alerts named in prometheusRule.disabledAlerts", () => {
      const alerts = (objects: KubeObject[]) =>
        only(objects, "PrometheusRule").spec.groups.flatMap((g: KubeObject) =>
          g.rules.map((r: KubeObject) => r.alert),
        );
      const all = alerts(render({ "prometheusRule.enabled": "true" }));
      const fewer = alerts(
        render({
          "prometheusRule.enabled": "true",
          "prometheusRule.disabledAlerts[0]": "WebhookOperatorWebhookSuccessRateLow",
        }),
      );
      expect(all).toContain("WebhookOperatorWebhookSuccessRateLow");
      expect(fewer).toEqual(all.filter((alert: string) => alert !== "WebhookOperatorWebhookSuccessRateLow"));
    });

    it("creates no RBAC objects with rbac.create=false, and no ServiceAccount with serviceAccount.create=false", () => {
      const objects = render({
        "rbac.create": "false",
        "serviceAccount.create": "false",
        "serviceAccount.name": "mine",
      });
      expect(kindsOf(objects)).not.toEqual(expect.arrayContaining(["ClusterRole"]));
      expect(kindsOf(objects).filter((kind) => /Role|ServiceAccount/.test(kind))).toEqual([]);
      expect(only(objects, "Deployment").spec.template.spec.serviceAccountName).toBe("mine");
    });

    it("drops the auth-delegator binding with Kubernetes tokens off, and the token roles with rbac.tokenRoles=false", () => {
      const objects = render({ "config.kubernetesTokens.enabled": "false", "rbac.tokenRoles": "false" });
      const names = objects
        .filter((o) => o.kind.startsWith("Cluster"))
        .map((o) => `${o.kind}/${o.metadata.name}`);
      expect(names).toEqual(["ClusterRole/webhook-operator", "ClusterRoleBinding/webhook-operator"]);
      const env = only(objects, "Deployment").spec.template.spec.containers[0].env;
      expect(env).toContainEqual({ name: "KUBERNETES_TOKEN_AUTH", value: "false" });
    });

    it("drops the PodDisruptionBudget, and keeps Postgres data in an emptyDir without persistence", () => {
      const objects = render({
        "podDisruptionBudget.enabled": "false",
        "postgres.persistence.enabled": "false",
      });
      expect(kindsOf(objects)).not.toContain("PodDisruptionBudget");
      const statefulSet = only(objects, "StatefulSet");
      expect(statefulSet.spec.volumeClaimTemplates).toBeUndefined();
      expect(statefulSet.spec.template.spec.volumes).toContainEqual({ name: "data", emptyDir: {} });
    });

    it("uses existing Secrets for the key and the Postgres password instead of generating them", () => {
      const objects = render({
        "apiKey.existingSecret": "my-key",
        "apiKey.existingSecretKey": "token",
        "postgres.auth.existingSecret": "my-pg",
        "secretEncryption.existingSecret": "my-keys",
        "secretEncryption.existingSecretKey": "aes",
        "metrics.token.existingSecret": "my-metrics",
        "metrics.token.existingSecretKey": "bearer",
      });
      expect(kindsOf(objects)).not.toContain("Secret");
      const pod = only(objects, "Deployment").spec.template.spec;
      expect(pod.volumes.find((v: KubeObject) => v.name === "api-key").secret).toEqual({
        secretName: "my-key",
        items: [{ key: "token", path: "api-key" }],
      });
      expect(pod.volumes.find((v: KubeObject) => v.name === "secret-keys").secret).toEqual({
        secretName: "my-keys",
        items: [{ key: "aes", path: "keys" }],
      });
      expect(pod.volumes.find((v: KubeObject) => v.name === "metrics-token").secret).toEqual({
        secretName: "my-metrics",
        items: [{ key: "bearer", path: "token" }],
      });
      expect(pod.volumes.find((v: KubeObject) => v.name === "database").secret).toEqual({
        secretName: "my-pg",
        items: [{ key: "database-url", path: "url" }],
      });
      const postgres = only(objects, "StatefulSet").spec.template.spec;
      expect(postgres.volumes.find((v: KubeObject) => v.name === "password").secret).toEqual({
        secretName: "my-pg",
        items: [{ key: "password", path: "password" }],
      });
    });
  });

  describe("bad values fail at install time with a clear message", () => {
    const failure = (set: Record<string, string>) => {
      const result = templateChart(helm.path as string, { set });
      expect(result.status).not.toBe(0);
      return result.stderr;
    };

    it("checks types, ranges and names against values.schema.json", () => {
      expect(failure({ "config.logLevel": "loud" })).toContain("/config/logLevel");
      expect(failure({ "config.delivery.concurrency": "0" })).toContain("/config/delivery/concurrency");
      expect(failure({ replicaCount: "two" })).toContain("/replicaCount");
      expect(failure({ replicaCuont: "2" })).toContain("additional properties 'replicaCuont' not allowed");
      expect(failure({ "config.namespaceSelector": "team in (a\\,b)" })).toContain(
        "/config/namespaceSelector",
      );
      expect(failure({ "prometheusRule.disabledAlerts[0]": "NoSuchAlert" })).toContain(
        "/prometheusRule/disabledAlerts/0",
      );
      expect(failure({ "config.webhookSecretsWithoutLabel[0]": "api-token" })).toContain(
        "/config/webhookSecretsWithoutLabel/0",
      );
      expect(
        failure({ "config.rolloutLinks[0].name": "Grafana", "config.rolloutLinks[0].url": "grafana/d/x" }),
      ).toContain("/config/rolloutLinks/0/url");
      for (const kinds of ["", "Deployment\\,CronJob"])
        expect(failure({ "config.watchWorkloadKinds": kinds })).toContain("/config/watchWorkloadKinds");
    });

    it("needs exactly one database", () => {
      expect(failure({ "postgres.enabled": "false" })).toContain(
        "No database: postgres.enabled is false, so set database.existingSecret.name",
      );
      expect(failure({ "database.existingSecret.name": "db" })).toContain("Two databases");
    });

    it("refuses Secrets listed without the label in a namespace rbac.secretNamespaces leaves out", () => {
      const narrowed = { "rbac.secretNamespaces[0]": "team-a" };
      expect(failure({ ...narrowed, "config.webhookSecretsWithoutLabel[0]": "team-b/api-token" })).toContain(
        "config.webhookSecretsWithoutLabel lists team-b/api-token, but rbac.secretNamespaces does not list team-b",
      );
      const allowed = render({
        ...narrowed,
        "config.webhookSecretsWithoutLabel[0]": "team-a/*",
        "config.webhookSecretsWithoutLabel[1]": "*",
      });
      expect(kindsOf(allowed)).toContain("Deployment");
    });

    it("keeps the shutdown timeout inside the termination grace period", () => {
      expect(failure({ "config.shutdownTimeoutMs": "50000" })).toContain(
        "must be below terminationGracePeriodSeconds",
      );
      // The preStop delay counts in the grace period too.
      expect(failure({ shutdownDelaySeconds: "10" })).toContain(
        "config.shutdownTimeoutMs (46000 ms) plus shutdownDelaySeconds (10 s) must be below terminationGracePeriodSeconds (55 s)",
      );
    });
  });
});
