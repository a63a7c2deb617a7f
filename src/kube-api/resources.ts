// The group, version and resources of the aggregated API, and its discovery documents: what kubectl
// reads (through the API server's aggregated discovery) to know that `deliveries` exist, are
// namespaced, and can be listed and watched.

export const group = "deliveries.webhook-operator.io";
export const version = "v1alpha1";
export const groupVersion = `${group}/${version}`;

export interface ResourceInfo {
  name: string;
  singularName: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
}

export const resources = {
  deliveries: {
    name: "deliveries",
    singularName: "delivery",
    kind: "Delivery",
    verbs: ["get", "list", "watch"],
    shortNames: ["dlv"],
  },
  rollouts: { name: "rollouts", singularName: "rollout", kind: "Rollout", verbs: ["get", "list", "watch"] },
  deliveryreplays: {
    name: "deliveryreplays",
    singularName: "deliveryreplay",
    kind: "DeliveryReplay",
    verbs: ["create"],
  },
} satisfies Record<string, ResourceInfo>;

export type ResourceName = keyof typeof resources;

export const isResourceName = (name: string): name is ResourceName => Object.hasOwn(resources, name);

export function apiResourceList() {
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion,
    resources: Object.values(resources).map((resource) => ({
      ...resource,
      namespaced: true,
      categories: resource.kind === "DeliveryReplay" ? [] : ["webhook-operator"],
    })),
  };
}

function apiGroup() {
  const preferred = { groupVersion, version };
  return { name: group, versions: [preferred], preferredVersion: preferred };
}

export const apiGroupList = () => ({ kind: "APIGroupList", apiVersion: "v1", groups: [apiGroup()] });
export const apiGroupDocument = () => ({ kind: "APIGroup", apiVersion: "v1", ...apiGroup() });
