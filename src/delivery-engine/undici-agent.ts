// undici's index loads all of undici: fetch, WebSocket, EventSource, caches, mocks, proxies (111
// modules). The engine uses its Agent, its connector and `dispatcher.request` alone, so it loads those
// modules and nothing else: the service's resident set is about 3 MiB lower idle and 3–10 MiB lower
// at its peak draining a burst (docs/operating.md, Memory). The index is what adds the request API to
// every dispatcher; the same assignment is made here. test/unit/undici-agent.test.ts holds these
// paths to the installed undici.
import api from "undici/lib/api/index.js";
import Agent from "undici/lib/dispatcher/agent.js";
import Dispatcher from "undici/lib/dispatcher/dispatcher.js";

Object.assign(Dispatcher.prototype, api);

export { default as buildConnector } from "undici/lib/core/connect.js";
export { Agent };
