import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/app/config.js";
import { parseLinkTemplates, renderLink } from "../../src/operator/rollouts/rollout-links.js";

// ROLLOUT_LINKS: URL templates checked at start-up with a clear error, rendered per rollout with each
// value URL-encoded.

const grafana = {
  name: "Grafana",
  url: "https://grafana.example/d/x?var-namespace={namespace}&var-workload={name}&kind={kind}&rev={revision}&p={project}",
};

describe("ROLLOUT_LINKS", () => {
  it("renders each placeholder URL-encoded", () => {
    const [template] = parseLinkTemplates(JSON.stringify([grafana]));
    expect(
      renderLink(template as never, {
        namespace: "shop",
        name: "web&x=1",
        kind: "StatefulSet",
        revision: "12",
        project: "Shop Team/EU",
      }),
    ).toEqual({
      name: "Grafana",
      url: "https://grafana.example/d/x?var-namespace=shop&var-workload=web%26x%3D1&kind=StatefulSet&rev=12&p=Shop%20Team%2FEU",
    });
  });

  it("is empty when unset", () => {
    expect(parseLinkTemplates("")).toEqual([]);
    expect(loadConfig({}).kubernetes.rolloutLinks).toEqual([]);
  });

  it.each([
    ["not JSON", "[{", /ROLLOUT_LINKS.*not JSON/],
    ["not a list", '{"name":"a","url":"https://a.example"}', /must be a JSON list/],
    [
      "an unknown placeholder",
      '[{"name":"a","url":"https://a.example/{team}"}]',
      /entry 1: unknown placeholder \{team\}/,
    ],
    ["a relative url", '[{"name":"a","url":"/d/{name}"}]', /entry 1: url must be an absolute http/],
    [
      "another scheme",
      '[{"name":"a","url":"javascript:alert({name})"}]',
      /entry 1: url must be an absolute http/,
    ],
    ["a name missing", '[{"url":"https://a.example"}]', /entry 1: name must be a string/],
    [
      "an unknown field",
      '[{"name":"a","url":"https://a.example","icon":"x"}]',
      /entry 1: unknown field icon/,
    ],
    ["too many", JSON.stringify(Array.from({ length: 11 }, () => grafana)), /at most 10 links/],
  ])("refuses %s at start-up, saying what is wrong", (_case, value, message) => {
    expect(() => loadConfig({ ROLLOUT_LINKS: value })).toThrow(message);
  });
});
