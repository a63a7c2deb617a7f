import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A statement kept as a `.sql` file written by hand, with named parameters (`:name`), as the database
 * runs it. Loaded once: its placeholders become `$1…$n` in order of first use, and `values` lays the
 * named values out in that order, refusing a missing or an unknown name (a typo fails on its first run,
 * in every test that runs it, not by binding the wrong value).
 *
 * Written here rather than taken from pgtyped or similar: those generate types from a running database
 * at build time (one more build step and a database for the build) and own the query call; this needs
 * only the renaming, about forty lines, and the call stays node-postgres's own, prepared by name.
 */
export interface SqlStatement<P extends Record<string, unknown>> {
  /** The file's name without `.sql`: the prepared statement's name on connections that prepare it. */
  readonly name: string;
  /**
   * What Postgres is sent (compactText): `-- <name>.sql` and the file's code on one line, `$n` in place
   * of each named parameter.
   */
  readonly text: string;
  /** The parameter names, in the order of their placeholders. */
  readonly parameters: readonly string[];
  values(params: P): unknown[];
}

export function loadSqlStatement<P extends Record<string, unknown>>(file: URL): SqlStatement<P> {
  const source = readFileSync(file, "utf8");
  const name = basename(fileURLToPath(file)).replace(/\.sql$/, "");
  const { text, parameters } = numberParameters(source, name);
  return {
    name,
    text: `-- ${name}.sql\n${compactText(text)}`,
    parameters,
    values(params) {
      const unknown = Object.keys(params).filter((key) => !parameters.includes(key));
      if (unknown.length > 0) throw new Error(`${name}.sql has no parameter ${unknown.join(", ")}`);
      return parameters.map((parameter) => {
        if (!(parameter in params)) throw new Error(`${name}.sql needs :${parameter}`);
        return params[parameter];
      });
    },
  };
}

/** A comment, to the end of its line or between its marks. */
const comment = String.raw`--[^\n]*|\/\*[\s\S]*?\*\/`;
/** Quoted text: a literal (E'' with backslash escapes) or a quoted identifier. */
const quoted = String.raw`[eE]'(?:\\.|''|[^'\\])*'|'(?:''|[^'])*'|"(?:""|[^"])*"`;

/**
 * The text with its comments dropped and each run of whitespace made one space, quoted text kept as
 * written. The files explain themselves in comments, about half their length, and Postgres handles a
 * statement's whole text on every execution, not only when preparing it: it copies it into the portal
 * at each bind, measures it for pg_stat_activity at bind and at execute, and pg_stat_statements scans
 * it again. With the comments, those took about 17 µs of a single-event emit's 500 (perf, 9,000 emits;
 * docs/benchmarks.md, "The statements' text"); without them about 8. And pg_stat_activity, which
 * keeps a statement's first kilobyte, shows its code rather than its header.
 */
export function compactText(text: string): string {
  const tokens = new RegExp(`(?:\\s+|${comment})+|${quoted}`, "g");
  return text.replace(tokens, (token) => (/^['"eE]/.test(token) ? token : " ")).trim();
}

/**
 * Replaces `:name` with `$n` outside comments, quoted text and `::` casts. A positional `$n` written in
 * the file is refused: every value is named where it is used.
 */
export function numberParameters(source: string, name = "statement"): { text: string; parameters: string[] } {
  const parameters: string[] = [];
  // Comments and quoted text first (kept as they are), casts, then the rest.
  const tokens = new RegExp(`${comment}|${quoted}|::|\\$\\d+|:([a-z_][a-z0-9_]*)`, "g");
  const text = source.replace(tokens, (token, parameter: string | undefined) => {
    if (/^\$\d+$/.test(token)) throw new Error(`${name}.sql uses a positional parameter (${token}): name it`);
    if (parameter === undefined) return token;
    let index = parameters.indexOf(parameter);
    if (index < 0) index = parameters.push(parameter) - 1;
    return `$${index + 1}`;
  });
  return { text, parameters };
}
