import { describe, expect, it } from "vitest";
import { humanAge } from "../../src/kube-api/age.js";
import { deliverySelectable } from "../../src/kube-api/delivery-store.js";
import { parseSelectors, requirementsSql } from "../../src/kube-api/selectors.js";
import { KubeStatusError } from "../../src/kube-api/status.js";
import { tableVersionAsked } from "../../src/kube-api/table.js";

const selectors = (query: string) => parseSelectors(new URLSearchParams(query), deliverySelectable);

describe("the aggregated API's selectors", () => {
  it("binds label and field requirements to their columns, values as parameters", () => {
    const requirements = selectors(
      "labelSelector=event%3Ddeployment.ready,outcome!%3Dfailed&fieldSelector=spec.webhook%3D%3Dshop-hook",
    );
    expect(requirements.map(({ equals, value }) => [equals, value])).toEqual([
      [true, "deployment.ready"],
      [false, "failed"],
      [true, "shop-hook"],
    ]);
    const { sql, params } = requirementsSql(requirements, 5);
    expect(sql).toBe(
      ` AND d.event_type = $5 AND ${deliverySelectable.labels.outcome} IS DISTINCT FROM $6 AND ${deliverySelectable.fields["spec.webhook"]} = $7`,
    );
    expect(params).toEqual(["deployment.ready", "failed", "shop-hook"]);
  });

  it.each([
    ["labelSelector=event in (deployment.ready)", /only key=value, key==value and key!=value/],
    ["labelSelector=rollout", /only key=value/],
    [
      "labelSelector=evnet%3Ddeployment.ready",
      /"evnet" is not a known label selector .*one of: webhook, event, outcome, rollout/,
    ],
    ["fieldSelector=status.phase%3Dready", /"status.phase" is not a known field selector/],
  ])("refuses %s with a 400 rather than selecting everything", (query, message) => {
    let refusal: unknown;
    try {
      selectors(query);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(KubeStatusError);
    expect((refusal as KubeStatusError).toStatus()).toMatchObject({
      kind: "Status",
      code: 400,
      reason: "BadRequest",
    });
    expect((refusal as KubeStatusError).message).toMatch(message);
  });
});

describe("the Table's AGE", () => {
  const now = Date.UTC(2026, 10, 29, 12);
  it.each([
    [45_000, "45s"],
    [119_000, "119s"],
    [7 * 60_000 + 12_000, "7m12s"],
    [45 * 60_000, "45m"],
    [5 * 3_600_000 + 20 * 60_000, "5h20m"],
    [30 * 3_600_000, "30h"],
    [3 * 86_400_000 + 4 * 3_600_000, "3d4h"],
    [40 * 86_400_000, "40d"],
    [-5_000, "0s"],
  ])("%d ms ago is %s, as kubectl prints ages", (ago, text) => {
    expect(humanAge(new Date(now - ago), now)).toBe(text);
  });
});

describe("tableVersionAsked", () => {
  it("reads kubectl's Accept: Table v1 first, v1beta1 else, plain JSON for -o yaml", () => {
    expect(
      tableVersionAsked(
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
      ),
    ).toBe("v1");
    expect(tableVersionAsked("application/json;as=Table;v=v1beta1;g=meta.k8s.io")).toBe("v1beta1");
    expect(tableVersionAsked("application/json")).toBeUndefined();
    expect(tableVersionAsked(undefined)).toBeUndefined();
  });
});
