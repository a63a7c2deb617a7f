import { connect, type Socket } from "node:net";

// One connection of a peer without a key: `idle` trickles a request head (a header line every 5 s),
// `post` sends a whole head without a key and then trickles its body (a byte every 500 ms).

export type Kind = "idle" | "post";

export interface AnonymousConnection {
  socket: Socket;
  /** How long the service held it: an idle one from its connect, a POST from its answer (the 401). */
  held: Promise<number>;
}

export function openAnonymous(port: number, kind: Kind): AnonymousConnection {
  const socket = connect(port, "127.0.0.1");
  let from: number | undefined;
  let ticking: NodeJS.Timeout | undefined;
  socket.on("connect", () => {
    if (kind === "idle") {
      from = Date.now();
      socket.write("GET /api/projects HTTP/1.1\r\nHost: service\r\n");
      ticking = setInterval(() => socket.write("X-Slow: 1\r\n"), 5_000);
    } else {
      socket.write(
        "POST /api/projects HTTP/1.1\r\nHost: service\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{",
      );
      ticking = setInterval(() => socket.write(" "), 500);
    }
  });
  socket.on("data", () => {
    from ??= Date.now();
  });
  socket.on("error", () => {});
  const held = new Promise<number>((resolve) =>
    socket.once("close", () => {
      clearInterval(ticking);
      resolve(from === undefined ? 0 : Date.now() - from);
    }),
  );
  return { socket, held };
}
