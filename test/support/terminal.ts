import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

/**
 * A bash session fed one command at a time, the way a person pastes a page's commands into a
 * terminal: variables exported by one command are there for the next, and `… &` keeps running in
 * the background until the session closes.
 */
export class Terminal {
  private readonly shell: ChildProcessWithoutNullStreams;
  private output = "";
  private waiting: (() => void) | undefined;
  /** Everything the session printed, background jobs included. */
  transcript = "";

  constructor(options: { cwd: string; env: NodeJS.ProcessEnv }) {
    // detached: its own process group, so close() ends the background jobs too.
    this.shell = spawn("bash", ["--norc", "--noprofile"], { ...options, detached: true });
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString("utf8");
      this.transcript += chunk.toString("utf8");
      this.waiting?.();
    };
    this.shell.stdout.on("data", collect);
    this.shell.stderr.on("data", collect);
  }

  /** Runs one command line (with its continuation lines); resolves with its output and exit status. */
  async run(command: string, timeoutMs = 600_000): Promise<{ output: string; status: number }> {
    const marker = `__terminal_done_${Math.random().toString(36).slice(2)}`;
    this.output = "";
    this.shell.stdin.write(`${command}\nprintf '\\n${marker} %s\\n' "$?"\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = new RegExp(`\\n${marker} (\\d+)\\n`).exec(this.output);
      if (done) {
        return { output: this.output.slice(0, done.index), status: Number(done[1]) };
      }
      if (Date.now() > deadline) throw new Error(`\`${command}\` did not finish within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 1_000);
      });
    }
  }

  close(): void {
    try {
      if (this.shell.pid) process.kill(-this.shell.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
}

/** The logical commands of a shell block: lines joined where they end with a backslash. */
export function commandsOf(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
}
