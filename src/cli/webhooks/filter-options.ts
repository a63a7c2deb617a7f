import { type Command, InvalidArgumentError, Option } from "commander";
import type { LabelSelector, WebhookFilters } from "../../delivery-engine/event-filters.js";
import { type WorkloadKind, workloadKinds } from "../../webhooks/filter-rules.js";
import { filtersText, parseSelector, SelectorSyntaxError } from "../../webhooks/selector-syntax.js";

// The options that set a webhook's filters (docs/cli.md): a label selector in kubectl's own syntax
// (`-l 'app=payments,tier in (web,api),!canary'`), environments and kinds. Together they are the
// webhook's `filters`; on update they replace its filters as a whole. The server checks the values.

export interface FilterOptions {
  selector?: LabelSelector;
  environment?: string[];
  /** As given: the server refuses a kind it does not know, naming the valid ones. */
  kind?: WorkloadKind[];
  removeFilters?: boolean;
}

const list = (value: string) =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

/** The selector option's value; a syntax error is a usage error (exit 2), before any request. */
function selectorOption(value: string): LabelSelector {
  try {
    return parseSelector(value);
  } catch (error) {
    if (error instanceof SelectorSyntaxError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

type RequestFilters = Omit<WebhookFilters, "kinds"> & { kinds?: WorkloadKind[] };

export function addFilterOptions(command: Command, { forUpdate }: { forUpdate: boolean }): Command {
  // Said on each of them: `--environment staging` alone drops a selector and kinds set before.
  const replaces = forUpdate
    ? "; the filter options replace all the webhook's filters: repeat the ones to keep (hooks show lists them)"
    : "";
  command
    .addOption(
      new Option(
        "-l, --selector <selector>",
        `only events of workloads whose labels match, in kubectl's syntax: 'app=payments,tier in (web,api),!canary'${replaces}`,
      ).argParser(selectorOption),
    )
    .addOption(
      new Option(
        "--environment <names>",
        `only events of these environments (comma-separated)${replaces}`,
      ).argParser(list),
    )
    .addOption(
      new Option(
        "--kind <kinds>",
        `only events of these workload kinds (comma-separated: ${workloadKinds.join(", ")})${replaces}`,
      ).argParser((value) => list(value) as WorkloadKind[]),
    );
  if (forUpdate) {
    command.addOption(
      new Option("--remove-filters", "remove every filter: all subscribed events again").conflicts([
        "selector",
        "environment",
        "kind",
      ]),
    );
  }
  return command;
}

/** The API's `filters` field for the options given; none when no filter option was. */
export function filterFields(options: FilterOptions): { filters?: RequestFilters | null } {
  if (options.removeFilters) return { filters: null };
  const filters: RequestFilters = {
    ...(options.selector ? { label_selector: options.selector } : {}),
    ...(options.environment ? { environments: options.environment } : {}),
    ...(options.kind ? { kinds: options.kind } : {}),
  };
  return Object.keys(filters).length === 0 ? {} : { filters };
}

/** Filters in one line, the selector in kubectl's syntax; null for none. */
export const filtersLine = (filters: WebhookFilters | undefined): string | null =>
  filters ? filtersText(filters) : null;
