import { terminalSafe } from "../terminal-text.js";

// Plain-text output: no colour and no terminal tricks, so it reads the same on a TTY, in a pipe and in
// a log. Every cell and value passes through terminalSafe here, where the text is laid out, so no
// view can forget it: a receiver's or tenant's control characters print as visible escapes. --json
// prints the API's JSON unchanged instead.

/** A value as one cell of text: null as "-", arrays comma-separated. */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.map(cell).join(",");
  return String(value);
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function formatTable(headers: string[], rows: string[][]): string {
  const safeRows = rows.map((row) => row.map((text) => terminalSafe(text)));
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...safeRows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((text, column) => (column === cells.length - 1 ? text : text.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[headers, ...safeRows].map(line).join("\n")}\n`;
}

/** `key: value` lines with the values aligned; lines after the first of a value are indented to match. */
export function formatFields(fields: [string, unknown][]): string {
  const width = Math.max(...fields.map(([key]) => key.length)) + 2;
  const lines = fields.map(([key, value]) => {
    const text = terminalSafe(Array.isArray(value) ? value.map(cell).join(", ") : cell(value), {
      multiline: true,
    });
    return `${`${key}:`.padEnd(width)}${text.replaceAll("\n", `\n${" ".repeat(width)}`)}`;
  });
  return `${lines.join("\n")}\n`;
}

/** A block of text under its own heading (a response body, a payload), line feeds kept. */
export function formatBlock(heading: string, text: string): string {
  return `${heading}:\n${terminalSafe(text, { multiline: true })}\n`;
}

/** Prints `data` as JSON with --json, otherwise the human rendering of it. */
export function emit<T>(json: boolean, data: T, human: (data: T) => string): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : human(data));
}
