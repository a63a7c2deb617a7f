import type { V1ControllerRevision, V1DaemonSet } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  daemonSetRevisionBefore,
  revisionBefore,
  revisionImagesOnly,
} from "../../src/operator/rollouts/controller-revisions.js";
import {
  type ContainerImage,
  imageChanges,
  rolloutChanges,
  templateImages,
  versionMetadata,
  versionMetadataNames,
} from "../../src/operator/rollouts/rollout-changes.js";
import type { ControllerRevisions } from "../../src/operator/rollouts/statefulset-phase.js";

// What changed in a rollout: the diff of images between two pod templates, the version and source
// labels read from a workload, and the revision a StatefulSet's or DaemonSet's rollout replaces.

const app = (name: string, image: string | null): ContainerImage => ({ name, image, init: false });
const init = (name: string, image: string | null): ContainerImage => ({ name, image, init: true });

describe("templateImages", () => {
  it("lists init containers first, then containers, each in spec order", () => {
    expect(
      templateImages({
        spec: {
          containers: [
            { name: "web", image: "shop:2" },
            { name: "sidecar", image: "proxy:1" },
          ],
          initContainers: [{ name: "migrate", image: "shop-migrate:2" }],
        },
      }),
    ).toEqual([init("migrate", "shop-migrate:2"), app("web", "shop:2"), app("sidecar", "proxy:1")]);
  });

  it("is empty for a template without a spec", () => {
    expect(templateImages(undefined)).toEqual([]);
    expect(templateImages({})).toEqual([]);
  });
});

describe("imageChanges", () => {
  it.each([
    {
      case: "a first rollout: every before is null",
      before: undefined,
      after: [app("web", "shop:1")],
      expected: [{ container: "web", init: false, before: null, after: "shop:1" }],
    },
    {
      case: "an image changed, another kept",
      before: [app("web", "shop:1"), app("sidecar", "proxy:1")],
      after: [app("web", "shop:2"), app("sidecar", "proxy:1")],
      expected: [
        { container: "web", init: false, before: "shop:1", after: "shop:2" },
        { container: "sidecar", init: false, before: "proxy:1", after: "proxy:1" },
      ],
    },
    {
      case: "a container added and one dropped (the dropped listed last, after null)",
      before: [app("web", "shop:1"), app("old", "legacy:9")],
      after: [app("web", "shop:1"), app("new", "fresh:1")],
      expected: [
        { container: "web", init: false, before: "shop:1", after: "shop:1" },
        { container: "new", init: false, before: null, after: "fresh:1" },
        { container: "old", init: false, before: "legacy:9", after: null },
      ],
    },
    {
      case: "an init container and a container of the same name are told apart",
      before: [init("setup", "tools:1"), app("setup", "shop:1")],
      after: [init("setup", "tools:2"), app("setup", "shop:1")],
      expected: [
        { container: "setup", init: true, before: "tools:1", after: "tools:2" },
        { container: "setup", init: false, before: "shop:1", after: "shop:1" },
      ],
    },
  ])("$case", ({ before, after, expected }) => {
    expect(imageChanges(before, after)).toEqual(expected);
  });
});

describe("versionMetadata: the labels and annotations that name a version or source", () => {
  // The documented table (docs/formats.md, "Where each detail comes from"), one row per name.
  it.each(versionMetadataNames.map((name) => [name]))(
    "reads %s from the pod template or the workload",
    (name) => {
      const value = `value-of-${name}`;
      for (const place of ["templateAnnotations", "templateLabels", "annotations", "labels"] as const) {
        const map = { [name]: value };
        const workload = {
          metadata: {
            ...(place === "annotations" && { annotations: map }),
            ...(place === "labels" && { labels: map }),
          },
          spec: {
            template: {
              metadata: {
                ...(place === "templateAnnotations" && { annotations: map }),
                ...(place === "templateLabels" && { labels: map }),
              },
            },
          },
        };
        expect(versionMetadata(workload), place).toEqual({ [name]: value });
      }
    },
  );

  it("prefers the pod template's to the workload's, and leaves out what is absent or blank", () => {
    const workload = {
      metadata: {
        labels: { "app.kubernetes.io/version": "1.0", "app.kubernetes.io/instance": "shop" },
        annotations: { "argocd.argoproj.io/tracking-id": "  " },
      },
      spec: { template: { metadata: { labels: { "app.kubernetes.io/version": "1.1" } } } },
    };
    expect(versionMetadata(workload)).toEqual({
      "app.kubernetes.io/version": "1.1",
      "app.kubernetes.io/instance": "shop",
    });
  });

  it("names exactly the documented ones, Argo CD's and Flux's included", () => {
    expect(versionMetadataNames).toEqual([
      "app.kubernetes.io/version",
      "org.opencontainers.image.revision",
      "org.opencontainers.image.source",
      "argocd.argoproj.io/tracking-id",
      "app.kubernetes.io/instance",
      "kustomize.toolkit.fluxcd.io/name",
      "kustomize.toolkit.fluxcd.io/namespace",
      "helm.toolkit.fluxcd.io/name",
      "helm.toolkit.fluxcd.io/namespace",
    ]);
  });
});

describe("rolloutChanges", () => {
  it("puts images, the revision compared with, the CI facts and the version labels together", () => {
    const workload = {
      metadata: { labels: { "app.kubernetes.io/version": "2" } },
      spec: { template: { spec: { containers: [{ name: "web", image: "shop:2" }] } } },
    };
    expect(
      rolloutChanges(
        workload,
        { revision: "3", images: [app("web", "shop:1")] },
        { branch: "main", commitSha: "abc", commitMessage: "Ship 2" },
      ),
    ).toEqual({
      images: [{ container: "web", init: false, before: "shop:1", after: "shop:2" }],
      previous_revision: "3",
      change_cause: "Ship 2",
      commit_sha: "abc",
      branch: "main",
      metadata: { "app.kubernetes.io/version": "2" },
    });
  });
});

describe("the revision a StatefulSet's or DaemonSet's rollout replaces", () => {
  const uid = "owner-uid";
  const revision = (number: number, image: string, owner = uid): V1ControllerRevision => {
    const full: V1ControllerRevision = {
      metadata: { name: `db-${number}`, namespace: "infra", ownerReferences: [{ uid: owner } as never] },
      revision: number,
      data: {
        spec: {
          template: {
            $patch: "replace",
            spec: { containers: [{ name: "db", image, env: [{ name: "A", value: "1" }] }] },
          },
        },
      },
    };
    // As the cache keeps it.
    return { ...full, data: revisionImagesOnly(full) };
  };
  const cache = (list: V1ControllerRevision[]): ControllerRevisions => ({
    get: (_namespace, name) => list.find((r) => r.metadata?.name === name),
    list: () => list,
  });
  const workload = (image: string): V1DaemonSet => ({
    metadata: { namespace: "infra", uid },
    spec: { selector: {}, template: { spec: { containers: [{ name: "db", image }] } } },
  });

  it("keeps only the containers' names and images of a ControllerRevision's data", () => {
    expect(revision(1, "db:1").data).toEqual({
      spec: { template: { spec: { containers: [{ name: "db", image: "db:1" }] } } },
    });
  });

  it("a StatefulSet's: the owner's highest number below the rollout's", () => {
    const revisions = cache([
      revision(1, "db:1"),
      revision(3, "db:3"),
      revision(2, "db:2"),
      revision(2, "x", "other"),
    ]);
    expect(revisionBefore(workload("db:3"), 3, revisions)).toEqual({
      revision: "2",
      images: [app("db", "db:2")],
    });
    expect(revisionBefore(workload("db:1"), 1, revisions)).toBeUndefined();
  });

  it("a StatefulSet's, where the controller repeated a number: the earlier of the two", () => {
    const named = (name: string, created: string, image: string) => ({
      ...revision(1, image),
      metadata: { ...revision(1, image).metadata, name, creationTimestamp: new Date(created) },
    });
    const revisions = cache([
      named("db-b", "2026-11-27T10:00:01Z", "db:2"),
      named("db-a", "2026-11-27T10:00:00Z", "db:1"),
    ]);
    expect(revisionBefore(workload("db:2"), 2, revisions)).toEqual({
      revision: "1",
      images: [app("db", "db:1")],
    });
  });

  it("a DaemonSet's: the one after the newest with its images, or the newest when the new one is not cached", () => {
    const cached = cache([revision(1, "db:1"), revision(2, "db:2")]);
    expect(daemonSetRevisionBefore(workload("db:2"), cached)?.revision).toBe("1");
    expect(daemonSetRevisionBefore(workload("db:3"), cached)?.revision).toBe("2");
    expect(daemonSetRevisionBefore(workload("db:1"), cache([revision(1, "db:1")]))).toBeUndefined();
  });
});
