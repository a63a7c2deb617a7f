import path from "node:path";
import { parseAllDocuments } from "yaml";
import { type Config, loadConfig } from "../../src/app/config.js";
import { chartDir } from "./monitoring-files.js";
import { type RunResult, run, type Tool } from "./tools.js";

// Runs helm on charts/webhook-operator and returns the rendered objects, for the chart tests.

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects of many kinds
export type KubeObject = Record<string, any> & {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
};

export const releaseName = "webhook-operator";
export const releaseNamespace = "webhook-operator";

/** `helm template` of the chart with --set pairs and values files; throws with helm's message on failure. */
export function renderChart(
  helm: string,
  options: { set?: Record<string, string>; values?: string[]; extraArgs?: string[] } = {},
): KubeObject[] {
  const result = templateChart(helm, options);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
}

export function templateChart(
  helm: string,
  options: { set?: Record<string, string>; values?: string[]; extraArgs?: string[] } = {},
): RunResult {
  const args = ["template", releaseName, chartDir, "--namespace", releaseNamespace];
  for (const file of options.values ?? []) args.push("--values", file);
  for (const [key, value] of Object.entries(options.set ?? {})) args.push("--set", `${key}=${value}`);
  return run(helm, [...args, ...(options.extraArgs ?? [])]);
}

export function only(objects: KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) {
    throw new Error(`expected one ${kind}${name ? ` ${name}` : ""}, found ${found.length}`);
  }
  return found[0] as KubeObject;
}

export function kindsOf(objects: KubeObject[]): string[] {
  return objects.map((o) => o.kind).sort();
}

export const productionValues = path.join(chartDir, "ci/production-values.yaml");

/** Computed on first use: describe blocks are collected even when skipped, and helm may be missing. */
export function lazy<T>(compute: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= compute();
    return value;
  };
}

/** Title of a suite that needs a tool, saying why it is skipped when it is. */
export function needing(title: string, tool: Tool): string {
  return tool.reason ? `${title} (skipped: ${tool.reason})` : title;
}

/** The pod specs of the workloads (Deployments and StatefulSets). */
export function podSpecs(objects: KubeObject[]): Array<{ owner: string; spec: KubeObject }> {
  return objects
    .filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet")
    .map((o) => ({ owner: `${o.kind}/${o.metadata.name}`, spec: o.spec.template.spec }));
}

/** The environment a container would see, with secrets and downward-API fields filled by examples. */
export function environmentOf(
  container: KubeObject,
  secretValues: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of container.env as KubeObject[]) {
    if (variable.valueFrom?.fieldRef) {
      env[variable.name] = variable.valueFrom.fieldRef.fieldPath === "metadata.namespace" ? "ns" : "pod-0";
    } else if (variable.valueFrom?.secretKeyRef) {
      env[variable.name] = secretValues[variable.name] ?? "secretvalue0123456789";
    } else {
      // The kubelet expands $(NAME) from variables defined earlier in the list.
      env[variable.name] = String(variable.value).replace(/\$\((\w+)\)/g, (_, ref: string) => env[ref] ?? "");
    }
  }
  return env;
}

/**
 * The operator's configuration from a rendered container. The database URL is a file in the pod
 * (DATABASE_URL_FILE, from a Secret): here `databaseUrl` stands in for what that file holds. The
 * metrics token's file (METRICS_TOKEN_FILE) is left out: secretFileOf checks where it comes from.
 */
export function operatorConfigOf(container: KubeObject, databaseUrl = "postgres://u:p@db:5432/wo"): Config {
  const {
    DATABASE_URL_FILE: _mountedInThePod,
    METRICS_TOKEN_FILE: _alsoMounted,
    ...env
  } = environmentOf(container);
  return loadConfig({ ...env, DATABASE_URL: databaseUrl });
}

/** The Secret volume mounted at the directory of `file` in the container, and the key it gives that file. */
export function secretFileOf(
  pod: KubeObject,
  container: KubeObject,
  file: string,
): { secretName: string; key: string } {
  const mount = (container.volumeMounts as KubeObject[]).find((m) => file.startsWith(`${m.mountPath}/`));
  const volume = (pod.volumes as KubeObject[]).find((v) => v.name === mount?.name);
  const item = volume?.secret?.items?.find((i: KubeObject) => `${mount?.mountPath}/${i.path}` === file);
  if (!item) throw new Error(`no Secret volume item is mounted at ${file}`);
  return { secretName: volume?.secret.secretName, key: item.key };
}

/** RBAC rules as "group/resource[names]" → sorted verbs. */
export function rulesOf(role: KubeObject): Record<string, string[]> {
  const rules: Record<string, string[]> = {};
  for (const rule of role.rules as KubeObject[]) {
    for (const group of rule.apiGroups as string[]) {
      for (const resource of rule.resources as string[]) {
        const names = rule.resourceNames ? `[${(rule.resourceNames as string[]).join(",")}]` : "";
        const key = `${group || "core"}/${resource}${names}`;
        rules[key] = [...(rules[key] ?? []), ...(rule.verbs as string[])].sort();
      }
    }
  }
  return rules;
}
