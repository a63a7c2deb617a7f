import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { Cluster } from "./cluster.js";

const run = promisify(execFile);

// The Gateway API's own CRDs (standard channel) from its Go module, which the Go module proxy serves;
// the cluster suite needs Go already (scripts/cluster/build.sh). Clusters often lack them: a test
// installs them only to show the operator picking them up, and removes them again.
const version = "v1.4.1";
const kinds = ["gatewayclasses", "gateways", "httproutes"];

export async function installGatewayApi(cluster: Cluster): Promise<{ remove(): Promise<void> }> {
  const { stdout } = await run("go", ["mod", "download", "-json", `sigs.k8s.io/gateway-api@${version}`], {
    timeout: 300_000,
  });
  const dir = (JSON.parse(stdout) as { Dir: string }).Dir;
  const files = kinds.flatMap((kind) => [
    "-f",
    path.join(dir, "config/crd/standard", `gateway.networking.k8s.io_${kind}.yaml`),
  ]);
  await cluster.kubectl(["apply", "--server-side", ...files]);
  await cluster.kubectl([
    "wait",
    "--for=condition=Established",
    ...kinds.map((kind) => `crd/${kind}.gateway.networking.k8s.io`),
  ]);
  return {
    async remove() {
      await cluster.kubectl(["delete", "--ignore-not-found", "--wait=false", ...files]);
    },
  };
}
