import type { TestService } from "./service.js";

/** Counts the connections the service takes from its pool until `stop`: one per query outside a transaction. */
export function countAcquires(running: TestService): { stop: () => number } {
  let acquired = 0;
  const count = () => {
    acquired += 1;
  };
  running.pool.on("acquire", count);
  return {
    stop: () => {
      running.pool.off("acquire", count);
      return acquired;
    },
  };
}
