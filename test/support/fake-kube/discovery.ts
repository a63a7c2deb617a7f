// FAKE Kubernetes API server for tests: discovery documents (/version, /api, /apis, /api/v1, /apis/G/V), enough
// for clients that resolve resources through discovery (client-node's KubernetesObjectApi).
import { pathNotFound } from "./errors.js";
import type { ResourceType } from "./resources.js";

export function discovery(types: ResourceType[], path: string): unknown {
  if (path === "/version") {
    return { major: "1", minor: "33", gitVersion: "v1.33.0-fake", platform: "linux/amd64" };
  }
  if (path === "/api") return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] };
  if (path === "/apis") {
    const groups = [...new Set(types.filter((t) => t.group).map((t) => t.group))];
    return {
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: groups.map((g) => {
        const versions = [...new Set(types.filter((t) => t.group === g).map((t) => t.version))].map((v) => ({
          groupVersion: `${g}/${v}`,
          version: v,
        }));
        return { name: g, versions, preferredVersion: versions[0] };
      }),
    };
  }
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (!m) throw pathNotFound();
  const group = m[2] ?? "";
  const version = m[1] ?? m[3] ?? "";
  const here = types.filter((t) => t.group === group && t.version === version);
  if (here.length === 0) throw pathNotFound();
  const verbs = ["create", "delete", "get", "list", "patch", "update", "watch"];
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group ? `${group}/${version}` : version,
    resources: here.flatMap((t) => [
      { name: t.plural, singularName: t.kind.toLowerCase(), namespaced: t.namespaced, kind: t.kind, verbs },
      ...(t.statusSubresource
        ? [
            {
              name: `${t.plural}/status`,
              singularName: "",
              namespaced: t.namespaced,
              kind: t.kind,
              verbs: ["get", "patch", "update"],
            },
          ]
        : []),
    ]),
  };
}
