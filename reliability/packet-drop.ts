import { execFileSync } from "node:child_process";

// Packets to a port on loopback dropped (not refused): what a client sees of a database behind a
// failed node or a broken route. One iptables rule, tagged so it is found again, and taken out on
// every way this process ends: the scenario's `finally`, SIGINT/SIGTERM, or an exit meanwhile.

export interface PacketDrop {
  /** Lets packets pass again (idempotent). */
  lift(): void;
}

const iptables = (...args: string[]) => execFileSync("iptables", ["-w", "5", ...args], { stdio: "pipe" });

/** Starts dropping TCP packets sent to `port` on loopback; needs root and iptables (`.ci/run` installs it). */
export function dropPacketsTo(port: number): PacketDrop {
  const rule = ["INPUT", "-i", "lo", "-p", "tcp", "--dport", String(port)];
  const tag = [
    "-m",
    "comment",
    "--comment",
    `webhook-operator reliability blackhole ${process.pid}`,
    "-j",
    "DROP",
  ];
  iptables("-I", ...rule, ...tag);
  let lifted = false;
  const lift = () => {
    if (lifted) return;
    lifted = true;
    process.off("exit", lift);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    iptables("-D", ...rule, ...tag);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    lift();
    process.kill(process.pid, signal);
  };
  process.once("exit", lift);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return { lift };
}
