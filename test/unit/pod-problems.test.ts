import { describe, expect, it } from "vitest";
import { failureMessage, failureReport, redactLines } from "../../src/operator/rollouts/failure-report.js";
import { lookAtPods } from "../../src/operator/rollouts/pod-look.js";
import { podProblems } from "../../src/operator/rollouts/pod-problems.js";
import { diagnosisDefaults } from "../support/diagnosis-defaults.js";
import {
  podEvent,
  probeEvent,
  recorded,
  recordedPods,
  webNewPods,
  webPod,
} from "../support/recorded-pods.js";

// What the diagnosis makes of pods as the kubelet and the scheduler report them (recorded-pods.ts).

describe("podProblems", () => {
  it("reads each cause the way the kubelet and the scheduler write it", () => {
    const first = (pod: Parameters<typeof podProblems>[0], events = [probeEvent]) =>
      podProblems(pod, events)[0];
    expect(first(recorded.imagePullBackOff)).toMatchObject({
      pod: "web-7c9d8f6b5-pull1",
      container: "web",
      reason: "ImagePullBackOff",
      message: expect.stringContaining("registry.example.com/shop/web:2.0.0: not found"),
      exit_code: null,
      restart_count: 0,
    });
    expect(first(recorded.crashLoop)).toMatchObject({
      container: "web",
      reason: "CrashLoopBackOff",
      exit_code: 1,
      restart_count: 3,
      termination_message: null,
    });
    expect(first(recorded.missingKey)).toMatchObject({
      reason: "CreateContainerConfigError",
      message: "couldn't find key LOG_LEVEL in ConfigMap shop/web-config",
    });
    expect(first(recorded.unschedulable)).toMatchObject({
      container: null,
      reason: "Unschedulable",
      message: expect.stringMatching(/^0\/1 nodes are available: 1 Insufficient cpu\./),
    });
    expect(first(recorded.probeFailing)).toMatchObject({
      container: "web",
      reason: "Unhealthy",
      message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
    });
  });

  it("finds nothing in a ready pod, nor a probe failure without the kubelet's event", () => {
    expect(podProblems(recorded.ready, [probeEvent])).toEqual([]);
    expect(podProblems(recorded.probeFailing, [])).toEqual([]);
    // A liveness probe failing restarts the container (a crash loop, read from its state), and a startup
    // probe fails by design until the app is up: neither is a cause here.
    for (const message of [
      "Liveness probe failed: connection refused",
      "Startup probe failed: HTTP probe failed with statuscode: 503",
    ])
      expect(podProblems(recorded.probeFailing, [{ ...probeEvent, message }])).toEqual([]);
  });
});

describe("failureReport", () => {
  it("lists three pods at most, counts the rest, and puts the newest warnings of those pods first", () => {
    const pods = Array.from({ length: 10 }, (_, i) => webPod(`p${i}`, recorded.missingKey.status));
    const problems = pods.flatMap((pod) => podProblems(pod));
    const events = pods.flatMap((pod, i) =>
      [1, 2].map((n) =>
        podEvent(pod, { type: "Warning", reason: "Failed", message: `Error ${i}.${n}`, seconds: i * 10 + n }),
      ),
    );
    const report = failureReport(problems, events, false);
    expect(report?.problems.map((p) => p.pod)).toEqual([
      "web-7c9d8f6b5-p0",
      "web-7c9d8f6b5-p1",
      "web-7c9d8f6b5-p2",
    ]);
    expect(report).toMatchObject({ pods_with_problems: 10, problems_omitted: 7, failed_early: false });
    // Only the listed pods' warnings, newest first.
    expect(report?.warnings.map((w) => w.message)).toEqual([
      "Error 2.2",
      "Error 2.1",
      "Error 1.2",
      "Error 1.1",
      "Error 0.2",
    ]);
  });

  it("leads with the most telling reason and says where in error_message", () => {
    const problems = [recorded.probeFailing, recorded.imagePullBackOff].flatMap((pod) =>
      podProblems(pod, [probeEvent]),
    );
    const report = failureReport(problems, [], true);
    if (!report) throw new Error("no report");
    expect(report.reason).toBe("ImagePullBackOff");
    expect(failureMessage(report, 120)).toMatch(
      /^ImagePullBackOff: container "web" of pod "web-7c9d8f6b5-pull1" \(and 1 more pod\): Back-off pulling image/,
    );
  });

  it("redacts a whole line that names a word of ROLLOUT_REDACT_WORDS, in any case", () => {
    expect(
      redactLines(
        ["listening on :8080", "Authorization: Bearer abc", "DB_PASSWORD=x"],
        ["password", "authorization"],
      ),
    ).toEqual(["listening on :8080", "[redacted]", "[redacted]"]);
  });
});

describe("lookAtPods", () => {
  it("polls with one request when the pods' status says it all", async () => {
    const source = recordedPods([recorded.imagePullBackOff, recorded.ready]);
    const look = await lookAtPods(source, webNewPods, "poll", diagnosisDefaults);
    expect(look).toMatchObject({ blocked: true, readyPods: 1 });
    expect(source.reads).toEqual(["pods"]);
  });

  it("reads a running pod's events to find the probe that fails it", async () => {
    const source = recordedPods([recorded.probeFailing], [probeEvent]);
    const look = await lookAtPods(source, webNewPods, "poll", diagnosisDefaults);
    expect(look?.problems.map((p) => p.reason)).toEqual(["Unhealthy"]);
    expect(source.reads).toEqual(["pods", "events web-7c9d8f6b5-probe1"]);
  });

  it("does not count a pod that does not fit as blocked when a node is being added for it", async () => {
    const scaleUp = podEvent(recorded.unschedulable, {
      type: "Normal",
      reason: "TriggeredScaleUp",
      message: "pod triggered scale-up: [{pool-1 1->2 (max: 5)}]",
      seconds: 20,
    });
    const helped = await lookAtPods(
      recordedPods([recorded.unschedulable], [scaleUp]),
      webNewPods,
      "poll",
      diagnosisDefaults,
    );
    expect(helped).toMatchObject({ blocked: false, problems: [{ reason: "Unschedulable" }] });
    const alone = await lookAtPods(
      recordedPods([recorded.unschedulable]),
      webNewPods,
      "poll",
      diagnosisDefaults,
    );
    expect(alone?.blocked).toBe(true);
  });

  it("reports a crash loop with its previous log's last lines, redacted, or its termination message", async () => {
    const log = ["starting web 2.0.0", "token=abc123 loaded", "panic: cannot open /etc/web/config.yaml"];
    const source = recordedPods([recorded.crashLoop, recorded.crashLoopWithMessage], [], {
      "web-7c9d8f6b5-crash1/web": log,
    });
    const look = await lookAtPods(source, webNewPods, "report", diagnosisDefaults);
    const [withLog, withMessage] = look?.problems ?? [];
    expect(withLog).toMatchObject({
      exit_code: 1,
      log_tail: ["starting web 2.0.0", "[redacted]", "panic: cannot open /etc/web/config.yaml"],
    });
    // A termination message is what the app chose to say: no log read for it.
    expect(withMessage).toMatchObject({
      exit_code: 78,
      termination_message: "config: DATABASE_URL is not set\n[redacted]",
      log_tail: null,
    });
    expect(source.reads.filter((read) => read.startsWith("log"))).toEqual(["log web-7c9d8f6b5-crash1"]);
  });

  it("reads no log with ROLLOUT_LOG_LINES=0", async () => {
    const source = recordedPods([recorded.crashLoop], [], { "web-7c9d8f6b5-crash1/web": ["boom"] });
    const look = await lookAtPods(source, webNewPods, "report", { ...diagnosisDefaults, logLines: 0 });
    expect(look?.problems[0]?.log_tail).toBeNull();
    expect(source.reads.some((read) => read.startsWith("log"))).toBe(false);
  });
});
