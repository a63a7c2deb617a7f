import { connect, type Socket } from "node:net";

// The anonymous peer of the slowloris scenario, in a process of its own so that its work does not slow
// the client it is measured against. It keeps `idle` connections open that trickle a request head (a
// header line every 5 s) and `posts` that send a head without a key and then trickle a body (a byte
// every 500 ms); once a second it opens again, up to 1,000, what the service closed. On "stop" it
// closes everything and reports how long the service let each kind of connection stay (a POST from
// the answer it got).

const [, , portArg = "", idleArg = "7000", postsArg = "200"] = process.argv;
const port = Number(portArg);
const target = { idle: Number(idleArg), posts: Number(postsArg) };

type Kind = "idle" | "posts";
const open: Record<Kind, Map<Socket, number>> = { idle: new Map(), posts: new Map() };
const longestMs: Record<Kind, number> = { idle: 0, posts: 0 };
const connecting: Record<Kind, number> = { idle: 0, posts: 0 };
let opened = 0;
let refused = 0;
let peakOpen = 0;
let stopping = false;

function attack(kind: Kind): void {
  const socket = connect(port, "127.0.0.1");
  const openedAt = Date.now();
  opened += 1;
  connecting[kind] += 1;
  let ticking: NodeJS.Timeout | undefined;
  socket.on("connect", () => {
    connecting[kind] -= 1;
    open[kind].set(socket, openedAt);
    peakOpen = Math.max(peakOpen, open.idle.size + open.posts.size);
    if (kind === "idle") {
      socket.write("GET /api/projects HTTP/1.1\r\nHost: service\r\n");
      ticking = setInterval(() => socket.write("X-Slow: 1\r\n"), 5_000);
    } else {
      socket.write(
        "POST /api/projects HTTP/1.1\r\nHost: service\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{",
      );
      ticking = setInterval(() => socket.write(" "), 500);
    }
  });
  let answeredAt: number | undefined;
  socket.on("data", () => {
    answeredAt ??= Date.now();
  });
  socket.on("error", () => {
    if (open[kind].has(socket)) return;
    refused += 1;
    connecting[kind] -= 1;
  });
  socket.on("close", () => {
    clearInterval(ticking);
    // A POST counts from its answer (the 401): what it holds after it; an idle one from its connect.
    const from = kind === "posts" ? answeredAt : openedAt;
    if (open[kind].delete(socket) && !stopping && from !== undefined) {
      longestMs[kind] = Math.max(longestMs[kind], Date.now() - from);
    }
  });
}

/** Opens, up to 1,000 at a time, what is missing of each kind. */
function topUp(): void {
  let budget = 1_000;
  for (const kind of ["posts", "idle"] as const) {
    while (budget > 0 && open[kind].size + connecting[kind] < target[kind]) {
      attack(kind);
      budget -= 1;
    }
  }
}

const topping = setInterval(topUp, 1_000);
topUp();

process.on("message", () => {
  stopping = true;
  clearInterval(topping);
  const now = Date.now();
  for (const kind of ["idle", "posts"] as const) {
    for (const [socket, openedAt] of open[kind]) {
      longestMs[kind] = Math.max(longestMs[kind], now - openedAt);
      socket.destroy();
    }
  }
  process.send?.({
    opened,
    refused,
    peakOpen,
    longestIdleMs: longestMs.idle,
    longestPostMs: longestMs.posts,
  });
  process.disconnect?.();
});
