import { describe, expect, it } from "vitest";
import { abortable, within } from "../../src/abortable.js";

const never = new Promise<never>(() => {});

describe("abortable", () => {
  it("settles as the work does while the signal has not aborted", async () => {
    const controller = new AbortController();
    await expect(abortable(Promise.resolve(7), controller.signal)).resolves.toBe(7);
    await expect(abortable(Promise.reject(new Error("refused")), controller.signal)).rejects.toThrow(
      "refused",
    );
  });

  it("rejects with the signal's reason once it aborts first, or already has", async () => {
    const controller = new AbortController();
    const waiting = abortable(never, controller.signal);
    controller.abort(new Error("stopping"));
    await expect(waiting).rejects.toThrow("stopping");
    await expect(abortable(Promise.resolve(1), controller.signal)).rejects.toThrow("stopping");
  });
});

describe("within", () => {
  it("says what did not answer, and in how long", async () => {
    await expect(within(never, 5, "reading the Lease")).rejects.toThrow(
      "reading the Lease did not answer within 5 ms",
    );
  });

  it("passes the work's own failure on unchanged", async () => {
    const failure = new Error("409 Conflict");
    await expect(within(Promise.reject(failure), 10_000, "renewing the Lease")).rejects.toBe(failure);
  });
});
