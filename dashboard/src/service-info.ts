import { useEffect, useState } from "preact/hooks";
import { api } from "./api";
import type { ServiceInfo } from "./api-types";

// Whether this installation runs in a cluster (projects are namespaces) and its retry waits: asked once
// per page load, by the pages whose words depend on it. Undefined until known: they say what holds
// either way meanwhile.
let asked: Promise<ServiceInfo> | undefined;

export function useServiceInfo(): ServiceInfo | undefined {
  const [info, setInfo] = useState<ServiceInfo>();
  useEffect(() => {
    asked ??= api.serviceInfo();
    asked.then(setInfo, () => {
      asked = undefined;
    });
  }, []);
  return info;
}

/** "5 s", "1 min", "2 h": a wait as people say it. */
export function waitText(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** The waits before the retries that `maxAttempts` allows: "5 s and 1 min". */
export function retryWaits(info: ServiceInfo, maxAttempts: number): string {
  const waits = info.retry_delays_ms.slice(0, Math.max(0, maxAttempts - 1)).map(waitText);
  return waits.length <= 1 ? (waits[0] ?? "") : `${waits.slice(0, -1).join(", ")} and ${waits.at(-1)}`;
}
