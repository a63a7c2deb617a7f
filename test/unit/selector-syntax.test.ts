import { describe, expect, it } from "vitest";
import { filtersText, parseSelector, selectorText } from "../../src/webhooks/selector-syntax.js";

// kubectl's label selector syntax, as the CLI's -l and the dashboard's filter field read it.

describe("parseSelector", () => {
  it.each([
    ["app=payments", { match_labels: { app: "payments" } }],
    ["app==payments, tier = web", { match_labels: { app: "payments", tier: "web" } }],
    ["release!=beta", { match_expressions: [{ key: "release", operator: "NotIn", values: ["beta"] }] }],
    [
      "tier in (web, api),env notin (dev)",
      {
        match_expressions: [
          { key: "tier", operator: "In", values: ["web", "api"] },
          { key: "env", operator: "NotIn", values: ["dev"] },
        ],
      },
    ],
    [
      "team,!canary",
      {
        match_expressions: [
          { key: "team", operator: "Exists" },
          { key: "canary", operator: "DoesNotExist" },
        ],
      },
    ],
    ["example.com/app=", { match_labels: { "example.com/app": "" } }],
  ])("reads %s", (text, selector) => {
    expect(parseSelector(text)).toEqual(selector);
  });

  it.each([
    ["", "The selector is empty."],
    [" , ", "The selector is empty."],
    ["tier in web", "is not a selector term"],
    ["a=b=c", "is not a selector term"],
    ["app=a,app=b", "The label app is given twice."],
  ])("refuses %j", (text, message) => {
    expect(() => parseSelector(text)).toThrow(message);
  });

  it("writes back what it reads", () => {
    const text = "app=payments,tier in (web,api),release notin (beta),team,!canary";
    expect(selectorText(parseSelector(text))).toBe(text);
    expect(
      filtersText({
        label_selector: parseSelector(text),
        environments: ["production"],
        kinds: ["Deployment"],
      }),
    ).toBe(`labels ${text}; environments production; kinds Deployment`);
  });
});
