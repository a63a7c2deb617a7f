// Types of the undici modules src/delivery-engine/undici-agent.ts loads without undici's index: the
// same classes and functions the index exports.
declare module "undici/lib/dispatcher/agent.js" {
  import { Agent } from "undici";
  export default Agent;
}
declare module "undici/lib/dispatcher/dispatcher.js" {
  import { Dispatcher } from "undici";
  export default Dispatcher;
}
declare module "undici/lib/core/connect.js" {
  import { buildConnector } from "undici";
  export default buildConnector;
}
declare module "undici/lib/api/index.js" {
  const api: Record<"request" | "stream" | "pipeline" | "upgrade" | "connect", unknown>;
  export default api;
}
