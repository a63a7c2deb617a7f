import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import type { ReceiverMessage, ReceiverRequest } from "./receiver.js";

/** Arrival times (Date.now() in the receiver) of the requests it got since the last collect. */
export interface Arrivals {
  ids: string[];
  times: number[];
  unparsable: number;
}

export interface ReceiverProcess {
  /** The base URL, e.g. http://127.0.0.1:PORT; any path is answered. */
  url: string;
  /** Its process id (for its CPU time, bench/cpu.ts). */
  pid: number | undefined;
  /** Hands over the arrivals recorded since the last call, and clears them. */
  collect(): Promise<Arrivals>;
  close(): Promise<void>;
}

function nextMessage<T extends ReceiverMessage["type"]>(
  child: ChildProcess,
  type: T,
): Promise<Extract<ReceiverMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ReceiverMessage) => {
      if (message.type !== type) return;
      child.off("message", onMessage);
      child.off("exit", onExit);
      resolve(message as Extract<ReceiverMessage, { type: T }>);
    };
    const onExit = (code: number | null) => reject(new Error(`receiver exited (code ${code})`));
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

/** Forks bench/receiver.ts (with the parent's loader flags, so tsx runs it) and waits until it listens. */
export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child = fork(new URL("./receiver.ts", import.meta.url), {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const { port } = await nextMessage(child, "listening");
  const request = (message: ReceiverRequest) => child.send(message);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    async collect() {
      const arrivals = nextMessage(child, "arrivals");
      request({ type: "collect" });
      const { ids, times, unparsable } = await arrivals;
      return { ids, times, unparsable };
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, "exit");
      request({ type: "close" });
      await exited;
    },
  };
}
