import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { CoreV1Api } from "@kubernetes/client-node";
import { KubeStatusError } from "./status.js";

/**
 * How the API server's aggregation layer proves itself and names its caller, as it publishes it in
 * ConfigMap kube-system/extension-apiserver-authentication (kube-apiserver's --requestheader-* flags):
 * its client certificate is signed by `clientCa` and, when `allowedNames` is not empty, its common name
 * is one of them; the caller's name, groups and extra fields come in the listed headers.
 */
export interface FrontProxySettings {
  clientCa: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

export interface Caller {
  user: string;
  groups: string[];
  extra: Record<string, string[]>;
}

export const authenticationConfigMap = {
  namespace: "kube-system",
  name: "extension-apiserver-authentication",
};

const listOf = (text: string | undefined): string[] => {
  if (!text) return [];
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? parsed.filter((entry): entry is string => typeof entry === "string") : [];
};

export async function readFrontProxySettings(core: CoreV1Api): Promise<FrontProxySettings> {
  const configMap = await core.readNamespacedConfigMap(authenticationConfigMap);
  const data = configMap.data ?? {};
  const clientCa = data["requestheader-client-ca-file"];
  if (!clientCa) {
    throw new Error(
      `ConfigMap ${authenticationConfigMap.namespace}/${authenticationConfigMap.name} has no requestheader-client-ca-file: ` +
        "the API server's aggregation layer is not configured (kube-apiserver --requestheader-client-ca-file, " +
        "--proxy-client-cert-file), so no request could reach the aggregated API. Configure it, or set AGGREGATED_API_PORT=0.",
    );
  }
  return {
    clientCa,
    allowedNames: listOf(data["requestheader-allowed-names"]),
    usernameHeaders: listOf(data["requestheader-username-headers"]),
    groupHeaders: listOf(data["requestheader-group-headers"]),
    extraHeaderPrefixes: listOf(data["requestheader-extra-headers-prefix"]),
  };
}

// headersDistinct: a header sent several times (one X-Remote-Group per group) is one value each, where
// `headers` would join them with commas.
const valuesOf = (request: IncomingMessage, name: string): string[] =>
  request.headersDistinct[name.toLowerCase()] ?? [];

/**
 * The caller the aggregation layer names, once its client certificate is verified (by the TLS
 * handshake, against `clientCa`) and its name allowed. Anything else is a 401: headers from a client
 * that is not the front proxy name nobody.
 */
export function callerOf(request: IncomingMessage, settings: FrontProxySettings): Caller {
  const socket = request.socket as TLSSocket;
  const certificate = socket.authorized ? socket.getPeerCertificate() : undefined;
  const commonName = certificate?.subject?.CN;
  const allowed =
    commonName !== undefined &&
    (settings.allowedNames.length === 0 || settings.allowedNames.includes(String(commonName)));
  if (!allowed) {
    throw new KubeStatusError(
      "Unauthorized",
      "Unauthorized: this API is served to the Kubernetes API server's aggregation layer only; use kubectl against the cluster",
    );
  }
  const user = settings.usernameHeaders
    .flatMap((name) => valuesOf(request, name))
    .find((name) => name !== "");
  if (!user) throw new KubeStatusError("Unauthorized", "Unauthorized: the request names no user");
  const groups = settings.groupHeaders.flatMap((name) => valuesOf(request, name));
  const extra: Record<string, string[]> = {};
  for (const [header, values] of Object.entries(request.headersDistinct)) {
    const prefix = settings.extraHeaderPrefixes.find((candidate) =>
      header.startsWith(candidate.toLowerCase()),
    );
    if (!prefix || values === undefined) continue;
    // Keys are lower-cased and percent-encoded by the front proxy (kube-apiserver's requestheader).
    const key = decodeURIComponent(header.slice(prefix.length));
    extra[key] = [...(extra[key] ?? []), ...values];
  }
  return { user, groups, extra };
}
