import type { z } from "zod";
import { configSchema } from "../../src/app/config.js";

// docs/configuration.md is this function's output: the settings, their defaults and what they accept
// come from the schema that parses them, so the page cannot describe a setting the code lacks.

interface Setting {
  name: string;
  description: string;
  accepts: string | undefined;
  defaultValue: unknown;
}

/** Walks the wrappers of one field (default, optional, pipe) collecting what the page shows of it. */
function describeSetting(name: string, field: z.ZodType): Setting {
  const setting: Setting = { name, description: "", accepts: undefined, defaultValue: undefined };
  let current: z.ZodType | undefined = field;
  while (current) {
    const meta = current.meta() as { accepts?: string } | undefined;
    setting.description ||= current.description ?? "";
    setting.accepts ??= meta?.accepts;
    const def = current.def as unknown as Record<string, unknown>;
    if (def.type === "default") setting.defaultValue ??= def.defaultValue;
    if (def.type === "enum")
      setting.accepts ??= Object.values(def.entries as object)
        .map((v) => `\`${v}\``)
        .join(", ");
    current = (def.innerType ?? def.in) as z.ZodType | undefined;
  }
  if (setting.description === "") throw new Error(`${name} has no description in src/app/config.ts`);
  return setting;
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

function defaultCell(value: unknown): string {
  if (value === undefined || value === "") return "—";
  return `\`${Array.isArray(value) ? value.join(",") : String(value)}\``;
}

export function renderConfigurationPage(): string {
  const rows = Object.entries(configSchema.shape).map(([name, field]) =>
    describeSetting(name, field as z.ZodType),
  );
  return `# Configuration

<!-- Written by \`npm run docs:config\` from the schema in src/app/config.ts; edit the descriptions there. -->

Every setting is an environment variable, read once at start-up. A value that is blank counts as
unset. A bad value stops the process before it does anything, with one line per problem naming the
variable and what it accepts, for example:

\`\`\`
Invalid configuration:
  DELIVERY_TIMEOUT_MS: must be a whole number
\`\`\`

In a cluster the Helm chart sets these from its values (each value's comment in
\`charts/webhook-operator/values.yaml\` names its variable; \`extraEnv\` sets any other).

| Variable | Default | Accepts | Meaning |
|---|---|---|---|
${rows
  .map(
    (row) =>
      `| \`${row.name}\` | ${defaultCell(row.defaultValue)} | ${cell(row.accepts ?? "text")} | ${cell(row.description)} |`,
  )
  .join("\n")}
`;
}
