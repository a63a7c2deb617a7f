import type { Socket } from "node:net";
import { type Kind, openAnonymous } from "./slowloris-connection.js";

// The peer without a key of the slowloris scenario, in a process of its own so that its work does not
// slow the client measured against it. It keeps `idle` connections trickling a request head and
// `post` ones trickling a body open; once a second it opens again, up to 1,000, what the service
// closed. It attacks and pauses when told, and reports how many it opened.

const [, , portArg = "", idleArg = "7000", postsArg = "200"] = process.argv;
const port = Number(portArg);
const target: Record<Kind, number> = { idle: Number(idleArg), post: Number(postsArg) };
const open: Record<Kind, Set<Socket>> = { idle: new Set(), post: new Set() };
let opened = 0;
let peakOpen = 0;

/** Opens, up to 1,000 at a time, what is missing of each kind. */
function topUp(): void {
  let budget = 1_000;
  for (const kind of ["post", "idle"] as const) {
    while (budget > 0 && open[kind].size < target[kind]) {
      const { socket } = openAnonymous(port, kind);
      open[kind].add(socket);
      socket.once("close", () => open[kind].delete(socket));
      opened += 1;
      budget -= 1;
    }
  }
  peakOpen = Math.max(peakOpen, open.idle.size + open.post.size);
}

let topping: NodeJS.Timeout | undefined;

/** "attack" starts (or resumes), "pause" closes everything, "report" answers with the counts. */
process.on("message", (command: "attack" | "pause" | "report") => {
  if (command === "attack") {
    topUp();
    topping = setInterval(topUp, 1_000);
  } else if (command === "pause") {
    clearInterval(topping);
    for (const socket of [...open.idle, ...open.post]) socket.destroy();
  } else {
    process.send?.({ opened, peakOpen });
  }
});
