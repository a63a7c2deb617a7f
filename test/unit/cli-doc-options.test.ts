import { readFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerWebhookCommands } from "../../src/cli/webhooks/commands.js";
import { addFilterOptions } from "../../src/cli/webhooks/filter-options.js";
import { addFormatOptions } from "../../src/cli/webhooks/format-options.js";
import { repoRoot } from "../support/tools.js";

// docs/cli.md's table of commands is where a user looks up what a command takes: every option that a
// command's --help lists is named in its row (a flag that works but is missing there, as --rate-limit
// once was, is not found). `update`'s row may name create's format and filter options as a group.

const page = readFileSync(path.join(repoRoot, "docs/cli.md"), "utf8");

/** The table's rows by their first cell's command names: "`enable` / `disable`" gives both. */
function rows(): Map<string, string> {
  const byName = new Map<string, string>();
  for (const line of page.split("\n").filter((l) => l.startsWith("| `"))) {
    const [first = "", ...rest] = line.slice(1).split(" | ");
    for (const [, name] of first.matchAll(/`([^`]+)`/g)) byName.set(name as string, rest.join(" | "));
  }
  return byName;
}

function commands(): Command[] {
  const program = new Command();
  registerWebhookCommands(program);
  const webhooks = program.commands.find((c) => c.name() === "webhooks") as Command;
  const deliveries = webhooks.commands.find((c) => c.name() === "deliveries") as Command;
  return [...webhooks.commands.filter((c) => c !== deliveries), ...deliveries.commands];
}

const fullName = (command: Command) =>
  command.parent?.name() === "deliveries" ? `deliveries ${command.name()}` : command.name();
const flags = (command: Command) => command.options.map((option) => option.long as string);

describe("docs/cli.md, the table of commands", () => {
  it("has a row for every webhooks command", () => {
    const documented = rows();
    expect(
      commands()
        .map(fullName)
        .filter((name) => !documented.has(name)),
    ).toEqual([]);
  });

  it("names every option each command's --help lists in that command's row", () => {
    const documented = rows();
    const groups = [
      ["the format options of `create`", flags(addFormatOptions(new Command(), { forUpdate: true }))],
      ["the filter options of `create`", flags(addFilterOptions(new Command(), { forUpdate: true }))],
    ] as const;
    const grouped = (row: string, flag: string) =>
      groups.some(([words, members]) => row.includes(words) && members.includes(flag));
    const missing = commands().flatMap((command) => {
      const row = documented.get(fullName(command)) ?? "";
      return flags(command)
        .filter((flag) => !row.includes(`\`${flag}`) && !grouped(row, flag))
        .map((flag) => `${fullName(command)} ${flag}`);
    });
    expect(missing).toEqual([]);
  });
});
