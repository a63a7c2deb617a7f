import { type Command, InvalidArgumentError, Option } from "commander";
import type { LabelExpression, LabelSelector, WebhookFilters } from "../../delivery-engine/event-filters.js";
import { type WorkloadKind, workloadKinds } from "../../webhooks/filter-rules.js";

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

/** kubectl's selector syntax: terms joined by commas outside parentheses. */
export function parseSelector(text: string): LabelSelector {
  const terms = text.match(/([^,(]|\([^)]*\))+/g)?.map((term) => term.trim()) ?? [];
  const labels: Record<string, string> = {};
  const expressions: LabelExpression[] = [];
  for (const term of terms) {
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    const equality = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
    const exists = /^(!?)\s*([^!=\s()]+)$/.exec(term);
    if (set) {
      expressions.push({
        key: set[1] as string,
        operator: set[2] === "in" ? "In" : "NotIn",
        values: list(set[3] ?? ""),
      });
    } else if (equality?.[2] === "!=") {
      expressions.push({ key: equality[1] as string, operator: "NotIn", values: [equality[3] ?? ""] });
    } else if (equality) {
      const key = equality[1] as string;
      if (key in labels) throw new InvalidArgumentError(`The label ${key} is given twice.`);
      labels[key] = equality[3] ?? "";
    } else if (exists) {
      expressions.push({ key: exists[2] as string, operator: exists[1] === "!" ? "DoesNotExist" : "Exists" });
    } else {
      throw new InvalidArgumentError(
        `'${term}' is not a selector term: use key=value, key!=value, 'key in (a,b)', 'key notin (a,b)', key or !key.`,
      );
    }
  }
  if (terms.length === 0) throw new InvalidArgumentError("The selector is empty.");
  return {
    ...(Object.keys(labels).length > 0 ? { match_labels: labels } : {}),
    ...(expressions.length > 0 ? { match_expressions: expressions } : {}),
  };
}

type RequestFilters = Omit<WebhookFilters, "kinds"> & { kinds?: WorkloadKind[] };

export function addFilterOptions(command: Command, { forUpdate }: { forUpdate: boolean }): Command {
  const replaces = forUpdate ? "; the filter options replace all the webhook's filters" : "";
  command
    .addOption(
      new Option(
        "-l, --selector <selector>",
        `only events of workloads whose labels match, in kubectl's syntax: 'app=payments,tier in (web,api),!canary'${replaces}`,
      ).argParser(parseSelector),
    )
    .addOption(
      new Option("--environment <names>", "only events of these environments (comma-separated)").argParser(
        list,
      ),
    )
    .addOption(
      new Option(
        "--kind <kinds>",
        `only events of these workload kinds (comma-separated: ${workloadKinds.join(", ")})`,
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

/** Filters in one line, the selector in kubectl's syntax: `app=payments,!canary; production; Deployment`. */
export function filtersText(filters: WebhookFilters | undefined): string | null {
  if (!filters) return null;
  const selector = filters.label_selector;
  const terms = [
    ...Object.entries(selector?.match_labels ?? {}).map(([key, value]) => `${key}=${value}`),
    ...(selector?.match_expressions ?? []).map(({ key, operator, values }) =>
      operator === "Exists"
        ? key
        : operator === "DoesNotExist"
          ? `!${key}`
          : `${key} ${operator === "In" ? "in" : "notin"} (${(values ?? []).join(",")})`,
    ),
  ];
  return [
    ...(terms.length > 0 ? [`labels ${terms.join(",")}`] : []),
    ...(filters.environments ? [`environments ${filters.environments.join(",")}`] : []),
    ...(filters.kinds ? [`kinds ${filters.kinds.join(",")}`] : []),
  ].join("; ");
}
