import { describe, expect, it } from "vitest";
import { Agent, buildConnector } from "../../src/delivery-engine/undici-agent.js";

// The engine loads undici's Agent and connector by path, without undici's index (which loads all of
// undici). These hold the paths to the installed undici: the same classes the index exports, and the
// request API the index adds to every dispatcher.
describe("undici's parts the engine loads", () => {
  it("give agents the request API without undici's index", () => {
    const agent = new Agent();
    expect(typeof agent.request).toBe("function");
    return agent.close();
  });

  it("are the Agent and buildConnector that undici exports", async () => {
    const undici = await import("undici");
    expect(Agent).toBe(undici.Agent);
    expect(buildConnector).toBe(undici.buildConnector);
  });
});
