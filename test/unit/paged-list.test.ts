import type { KubernetesListObject, V1ConfigMap } from "@kubernetes/client-node";
import { expect, it } from "vitest";
import { listInPages } from "../../src/operator/paged-list.js";

it("asks page after page with the continue token, slims each object, and keeps the snapshot's resourceVersion", async () => {
  const asked: Array<{ limit: number; _continue?: string }> = [];
  const pages: KubernetesListObject<V1ConfigMap>[] = [
    {
      metadata: { resourceVersion: "9", _continue: "t1" },
      items: [{ metadata: { name: "a" }, data: { k: "1" } }],
    },
    {
      metadata: { resourceVersion: "9", _continue: "t2" },
      items: [{ metadata: { name: "b" }, data: { k: "2" } }],
    },
    { metadata: { resourceVersion: "9" }, items: [{ metadata: { name: "c" }, data: { k: "3" } }] },
  ];
  const list = await listInPages<V1ConfigMap>(
    async (page) => {
      asked.push(page);
      return pages[asked.length - 1] as KubernetesListObject<V1ConfigMap>;
    },
    (object) => ({ metadata: object.metadata }),
    2,
  );
  expect(asked).toEqual([{ limit: 2 }, { limit: 2, _continue: "t1" }, { limit: 2, _continue: "t2" }]);
  expect(list.items).toEqual([
    { metadata: { name: "a" } },
    { metadata: { name: "b" } },
    { metadata: { name: "c" } },
  ]);
  expect(list.metadata?.resourceVersion).toBe("9");
  expect(list.metadata?._continue).toBeUndefined();
});
