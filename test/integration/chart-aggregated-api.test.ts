import { createPrivateKey, X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  environmentOf,
  type KubeObject,
  kindsOf,
  needing,
  only,
  releaseNamespace,
  renderChart,
  rulesOf,
  secretFileOf,
} from "../support/chart.js";
import { locateHelm } from "../support/tools.js";

// The chart's aggregated API (aggregatedApi.*): off by default, leaving no trace; on, the APIService, its
// serving certificate (generated, or cert-manager's), the Service port, the pod's port, files and
// settings, the bindings an extension API server needs, the roles users bind, and the NetworkPolicy's
// opening for the API server.

const helm = locateHelm();
const fullname = "webhook-operator";
const apiService = "v1alpha1.deliveries.webhook-operator.io";
const serviceHost = `${fullname}.${releaseNamespace}.svc`;

const render = (set: Record<string, string> = {}) => renderChart(helm.path as string, { set });
const on = (set: Record<string, string> = {}) => render({ "aggregatedApi.enabled": "true", ...set });
const operatorPod = (objects: KubeObject[]) => only(objects, "Deployment").spec.template.spec;
const names = (objects: KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);
const pem = (base64: string) => Buffer.from(base64, "base64").toString("utf8");

describe.skipIf(!helm.path)(needing("the aggregated API in the chart", helm), { timeout: 60_000 }, () => {
  it("is off by default: no APIService, certificate, port or roles, and AGGREGATED_API_PORT=0", () => {
    const objects = render({ "networkPolicy.enabled": "true" });
    expect(kindsOf(objects)).not.toContain("APIService");
    expect(
      names(objects).filter((name) => /aggregated|deliveries-|rollouts-|authentication-reader/.test(name)),
    ).toEqual([]);
    expect(only(objects, "Service", fullname).spec.ports.map((port: KubeObject) => port.name)).toEqual([
      "http",
    ]);
    const container = operatorPod(objects).containers[0];
    expect(container.ports.map((port: KubeObject) => port.name)).toEqual(["http"]);
    const env = environmentOf(container);
    expect(env.AGGREGATED_API_PORT).toBe("0");
    expect(Object.keys(env).filter((name) => name.startsWith("AGGREGATED_API_"))).toEqual([
      "AGGREGATED_API_PORT",
    ]);
    const policy = only(objects, "NetworkPolicy", fullname);
    expect(JSON.stringify(policy.spec.ingress)).not.toContain("aggregated-api");
  });

  it("registers the APIService with the operator's Service on port 8443 and the CA of a generated certificate", () => {
    const objects = on();
    const service = only(objects, "APIService", apiService).spec;
    expect(service).toMatchObject({
      group: "deliveries.webhook-operator.io",
      version: "v1alpha1",
      service: { name: fullname, namespace: releaseNamespace, port: 8443 },
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    });
    expect(service.insecureSkipTLSVerify).toBeUndefined();
    const ports = only(objects, "Service", fullname).spec.ports;
    expect(ports).toContainEqual({
      name: "aggregated-api",
      port: 8443,
      targetPort: "aggregated-api",
      protocol: "TCP",
    });

    const secret = only(objects, "Secret", `${fullname}-aggregated-api-tls`);
    expect(secret.type).toBe("kubernetes.io/tls");
    expect(secret.data["ca.crt"]).toBe(service.caBundle);
    const ca = new X509Certificate(pem(service.caBundle));
    const certificate = new X509Certificate(pem(secret.data["tls.crt"]));
    // What the aggregation layer checks: signed by the caBundle's CA, for <service>.<namespace>.svc.
    expect(ca.ca).toBe(true);
    expect(certificate.checkIssued(ca) && certificate.verify(ca.publicKey)).toBe(true);
    expect(certificate.checkHost(serviceHost)).toBe(serviceHost);
    expect(certificate.checkHost(`${fullname}.elsewhere.svc`)).toBeUndefined();
    expect(certificate.checkPrivateKey(createPrivateKey(pem(secret.data["tls.key"])))).toBe(true);
  });

  it("serves it from the pod: port 8443, the certificate and key as files from that Secret, and the three settings", () => {
    const objects = on();
    const pod = operatorPod(objects);
    const container = pod.containers[0];
    expect(container.ports).toContainEqual({ name: "aggregated-api", containerPort: 8443, protocol: "TCP" });
    const env = environmentOf(container);
    expect(env.AGGREGATED_API_PORT).toBe("8443");
    const secretName = `${fullname}-aggregated-api-tls`;
    expect(secretFileOf(pod, container, env.AGGREGATED_API_CERT_FILE as string)).toEqual({
      secretName,
      key: "tls.crt",
    });
    expect(secretFileOf(pod, container, env.AGGREGATED_API_KEY_FILE as string)).toEqual({
      secretName,
      key: "tls.key",
    });
  });

  it("binds the operator to system:auth-delegator and, in kube-system, extension-apiserver-authentication-reader", () => {
    const objects = on({ "config.kubernetesTokens.enabled": "false" });
    const subject = { kind: "ServiceAccount", name: fullname, namespace: releaseNamespace };
    const delegator = only(objects, "ClusterRoleBinding", `${fullname}-auth-delegator`);
    expect(delegator.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: "system:auth-delegator",
    });
    expect(delegator.subjects).toEqual([subject]);
    const reader = only(objects, "RoleBinding", `${fullname}-${releaseNamespace}-authentication-reader`);
    expect(reader.metadata.namespace).toBe("kube-system");
    expect(reader.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "extension-apiserver-authentication-reader",
    });
    expect(reader.subjects).toEqual([subject]);
    expect(names(on({ "rbac.create": "false" })).filter((name) => name.includes("Role"))).toEqual([]);
  });

  it("ships roles to read deliveries, read rollouts and replay, aggregated into view and edit unless turned off", () => {
    const group = "deliveries.webhook-operator.io";
    const roles = (objects: KubeObject[]) =>
      Object.fromEntries(
        ["deliveries-viewer", "rollouts-viewer", "deliveries-replayer"].map((role) => {
          const object = only(objects, "ClusterRole", `${fullname}-${role}`);
          const aggregation = Object.keys(object.metadata.labels ?? {}).filter((label) =>
            label.startsWith("rbac."),
          );
          return [role, { rules: rulesOf(object), aggregation }];
        }),
      );
    expect(roles(on())).toEqual({
      "deliveries-viewer": {
        rules: { [`${group}/deliveries`]: ["get", "list", "watch"] },
        aggregation: ["rbac.authorization.k8s.io/aggregate-to-view"],
      },
      "rollouts-viewer": {
        rules: { [`${group}/rollouts`]: ["get", "list", "watch"] },
        aggregation: ["rbac.authorization.k8s.io/aggregate-to-view"],
      },
      "deliveries-replayer": {
        rules: { [`${group}/deliveryreplays`]: ["create"] },
        aggregation: ["rbac.authorization.k8s.io/aggregate-to-edit"],
      },
    });
    const unaggregated = roles(on({ "aggregatedApi.aggregateToDefaultRoles": "false" }));
    expect(Object.values(unaggregated).map((role) => role.aggregation)).toEqual([[], [], []]);
  });

  it("opens port 8443 in the NetworkPolicy, to any source or to apiServerCidrs", () => {
    const rule = (objects: KubeObject[]) =>
      (only(objects, "NetworkPolicy", fullname).spec.ingress as KubeObject[]).find((r) =>
        r.ports.some((port: KubeObject) => port.port === "aggregated-api"),
      );
    expect(rule(on({ "networkPolicy.enabled": "true" }))).toEqual({
      ports: [{ port: "aggregated-api", protocol: "TCP" }],
    });
    const narrowed = on({
      "networkPolicy.enabled": "true",
      "networkPolicy.apiServerCidrs[0]": "10.0.0.0/24",
    });
    expect(rule(narrowed)?.from).toEqual([{ ipBlock: { cidr: "10.0.0.0/24" } }]);
  });

  it("takes the certificate from cert-manager when asked: a Certificate, a self-signed Issuer or the one named, the CA injected", () => {
    const objects = on({ "aggregatedApi.certManager.enabled": "true" });
    expect(names(objects)).not.toContain(`Secret/${fullname}-aggregated-api-tls`);
    const certificate = only(objects, "Certificate", `${fullname}-aggregated-api`);
    expect(certificate.spec).toMatchObject({
      secretName: `${fullname}-aggregated-api-tls`,
      dnsNames: [serviceHost, `${serviceHost}.cluster.local`],
      issuerRef: { name: `${fullname}-aggregated-api-selfsigned`, kind: "Issuer", group: "cert-manager.io" },
    });
    expect(only(objects, "Issuer", `${fullname}-aggregated-api-selfsigned`).spec).toEqual({ selfSigned: {} });
    const service = only(objects, "APIService", apiService);
    expect(service.metadata.annotations).toEqual({
      "cert-manager.io/inject-ca-from": `${releaseNamespace}/${fullname}-aggregated-api`,
    });
    expect(service.spec.caBundle).toBeUndefined();
    const pod = operatorPod(objects);
    const env = environmentOf(pod.containers[0]);
    expect(secretFileOf(pod, pod.containers[0], env.AGGREGATED_API_CERT_FILE as string).secretName).toBe(
      certificate.spec.secretName,
    );

    const named = on({
      "aggregatedApi.certManager.enabled": "true",
      "aggregatedApi.certManager.issuerRef.name": "cluster-ca",
      "aggregatedApi.certManager.issuerRef.kind": "ClusterIssuer",
    });
    expect(kindsOf(named)).not.toContain("Issuer");
    expect(only(named, "Certificate").spec.issuerRef).toEqual({
      name: "cluster-ca",
      kind: "ClusterIssuer",
      group: "cert-manager.io",
    });
  });
});
