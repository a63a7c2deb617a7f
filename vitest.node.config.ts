import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { reporters } from "./test/support/result-files.js";

// The node suite (test/node/): the chart installed with helm on a real node (kubelet, containerd,
// kube-proxy, CoreDNS) beside the control plane of scripts/cluster, the operator running from its
// image as pods. Needs root; run it with `npm run test:node`. Files run one at a time, each with a
// release of its own, and host-restored.test.ts last: it stops the node and compares the machine with
// what it was before the node started.
class HostRestoredLast extends BaseSequencer {
  override async sort(files: TestSpecification[]) {
    const sorted = await super.sort(files);
    const last = (file: TestSpecification) => (file.moduleId.endsWith("host-restored.test.ts") ? 1 : 0);
    return sorted.sort((a, b) => last(a) - last(b));
  }
}

export default defineConfig({
  test: {
    reporters: reporters("node"),
    include: ["test/node/**/*.test.ts"],
    globalSetup: ["test/support/node-setup.ts"],
    fileParallelism: false,
    sequence: { sequencer: HostRestoredLast },
    testTimeout: 600_000,
    // The first run builds the cluster's binaries and the images: up to an hour on a busy machine.
    hookTimeout: 3_600_000,
  },
});
