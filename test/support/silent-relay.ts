import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";

// A TCP relay on loopback in front of a real Postgres whose path can go silent: bytes are neither
// answered nor refused, as when a network drops packets (no root needed, unlike a firewall rule; the
// reliability suite's `blackhole` scenario drops real packets). The relay's own kernel still answers
// TCP keepalive probes, so what this shows is the client's own timeouts, not keepalive.

export interface SilentRelay {
  /** `databaseUrl` with its host and port replaced by the relay's. */
  url: string;
  /** From now on nothing passes: open connections fall silent, new ones are accepted and never answered. */
  silence(): void;
  /**
   * New connections pass again; the ones that fell silent stay silent for good, as connections on a
   * path that died do: a client recovers only by giving them up.
   */
  restore(): void;
  close(): Promise<void>;
}

export async function startSilentRelay(databaseUrl: string): Promise<SilentRelay> {
  const target = new URL(databaseUrl);
  let silent = false;
  const open = new Set<Socket>();
  const paths: { client: Socket; upstream: Socket }[] = [];
  const strand = (socket: Socket) => {
    socket.pause();
    socket.removeAllListeners("data");
  };
  const server = createServer((client) => {
    open.add(client);
    client.on("error", () => {});
    client.once("close", () => open.delete(client));
    if (silent) {
      strand(client); // accepted, never read: the client's bytes go nowhere
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    open.add(upstream);
    upstream.on("error", () => client.destroy());
    upstream.once("close", () => open.delete(upstream));
    client.on("error", () => upstream.destroy());
    client.pipe(upstream).pipe(client);
    paths.push({ client, upstream });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: url.toString(),
    silence() {
      silent = true;
      for (const { client, upstream } of paths.splice(0)) {
        client.unpipe();
        upstream.unpipe();
        strand(client);
        strand(upstream);
      }
    },
    restore() {
      silent = false;
    },
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of open) socket.destroy();
      await closed;
    },
  };
}
