import { createServer } from "node:net";

/**
 * A loopback port that was free a moment ago: bound, then closed. Listening on it later is what a
 * caller wants (an embedded Postgres); connecting to it finds nobody (a refused connection).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
