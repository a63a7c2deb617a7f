import { KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import type { Cluster } from "./cluster.js";

/** Every Kubernetes call the operator makes, as RBAC rules (what the chart grants, cluster-wide). */
export const operatorRules: V1PolicyRule[] = [
  { apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] },
  { apiGroups: [""], resources: ["secrets"], verbs: ["get", "watch"] },
  { apiGroups: ["apps"], resources: ["deployments"], verbs: ["list", "watch"] },
  { apiGroups: ["apps"], resources: ["replicasets"], verbs: ["list", "watch"] },
  {
    apiGroups: ["apps"],
    resources: ["statefulsets", "daemonsets", "controllerrevisions"],
    verbs: ["list", "watch"],
  },
  { apiGroups: [""], resources: ["services"], verbs: ["list", "watch"] },
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: ["list", "watch"] },
  {
    apiGroups: ["gateway.networking.k8s.io"],
    resources: ["httproutes", "gateways"],
    verbs: ["list", "watch"],
  },
  { apiGroups: ["webhook-operator.io"], resources: ["webhooks"], verbs: ["list", "watch", "patch"] },
  { apiGroups: ["webhook-operator.io"], resources: ["webhooks/status"], verbs: ["patch"] },
  { apiGroups: [""], resources: ["events"], verbs: ["create", "list"] },
  // The reads of rollout diagnostics (rollouts/pod-reads.ts): requests while a rollout stalls.
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
  { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
];

/**
 * A ServiceAccount in `namespace` bound cluster-wide to a ClusterRole of `rules`, and a kubeconfig
 * that authenticates with a token of it (TokenRequest), as a pod of that ServiceAccount would.
 */
export async function serviceAccountIdentity(
  cluster: Cluster,
  options: {
    namespace: string;
    name: string;
    rules: V1PolicyRule[];
    audiences?: string[];
    expirationSeconds?: number;
  },
) {
  const { namespace, name } = options;
  const roleName = `${namespace}-${name}`;
  await cluster.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const rbac = cluster.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({ body: { metadata: { name: roleName }, rules: options.rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: roleName },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
  });
  const token = await createToken(cluster, namespace, name, options);
  return {
    token,
    kubeConfig: () => kubeConfigWithToken(cluster, token),
    /** Replaces the ClusterRole's rules (grant or revoke at run time). */
    setRules: (rules: V1PolicyRule[]) =>
      rbac.replaceClusterRole({ name: roleName, body: { metadata: { name: roleName }, rules } }),
    remove: async () => {
      await rbac.deleteClusterRoleBinding({ name: roleName }).catch(() => {});
      await rbac.deleteClusterRole({ name: roleName }).catch(() => {});
    },
  };
}

export async function createToken(
  cluster: Cluster,
  namespace: string,
  name: string,
  options: { audiences?: string[]; expirationSeconds?: number } = {},
): Promise<string> {
  const request = await cluster.core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: {
      spec: { audiences: options.audiences ?? [], expirationSeconds: options.expirationSeconds ?? 3600 },
    },
  });
  return request.status?.token ?? "";
}

export function kubeConfigWithToken(cluster: Cluster, token: string): KubeConfig {
  const admin = cluster.kubeConfig();
  const server = admin.getCurrentCluster();
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      { name: "cluster", server: server?.server ?? "", caFile: server?.caFile, skipTLSVerify: false },
    ],
    users: [{ name: "token", token }],
    contexts: [{ name: "token", cluster: "cluster", user: "token" }],
    currentContext: "token",
  });
  return kubeConfig;
}
