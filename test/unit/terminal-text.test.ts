import { describe, expect, it } from "vitest";
import { terminalSafe } from "../../src/cli/terminal-text.js";
import { formatFields, formatTable } from "../../src/cli/webhooks/output.js";
import { deliveryTable } from "../../src/cli/webhooks/views.js";

// The CLI's one guard between others' text and the operator's terminal (src/cli/terminal-text.ts).
// test/integration/cli-terminal.test.ts runs a hostile receiver through the built binary.

describe("terminalSafe", () => {
  it.each([
    ["ESC and CSI (clear screen)", "\x1b[2J", "\\x1b[2J"],
    ["OSC 52 (clipboard) ended by BEL", "\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"],
    ["carriage return and tab", "a\rb\tc", "a\\rb\\tc"],
    ["NUL, DEL", "\x00\x7f", "\\x00\\x7f"],
    ["C1: one-byte CSI and OSC", "\x9b2J\x9d0;t", "\\x9b2J\\x9d0;t"],
    [
      "bidi overrides and isolates",
      "\u202egnp\u202c\u2066x\u2069",
      "\\u{202e}gnp\\u{202c}\\u{2066}x\\u{2069}",
    ],
    ["line and paragraph separators", "a\u2028b\u2029", "a\\u{2028}b\\u{2029}"],
    ["line feed in a one-line value", "a\nb", "a\\nb"],
    ["plain text, backslashes and other scripts unchanged", "C:\\x1b café 日本 ✓", "C:\\x1b café 日本 ✓"],
  ])("%s", (_name, input, shown) => {
    expect(terminalSafe(input)).toBe(shown);
  });

  it("keeps line feeds in blocks and escapes everything else there", () => {
    expect(terminalSafe("one\r\ntwo\x1b[1A\n", { multiline: true })).toBe("one\\r\ntwo\\x1b[1A\n");
  });
});

describe("human output", () => {
  it("tables escape every cell and align on the escaped width", () => {
    const table = formatTable(
      ["A", "B"],
      [
        ["\x1b[2Jx", "1"],
        ["y", "2\n3"],
      ],
    );
    expect(table).toBe("A         B\n\\x1b[2Jx  1\ny         2\\n3\n");
  });

  it("key: value lines escape values and keep forged lines indented under their key", () => {
    expect(formatFields([["body", "ok\nsuccess: true\x1b[K"]])).toBe(
      "body: ok\n      success: true\\x1b[K\n",
    );
  });

  it("the deliveries table shows an error message's controls escaped", () => {
    const table = deliveryTable([
      {
        id: 1,
        event_type: "deployment.failed",
        attempt_number: 1,
        success: false,
        status_code: 500,
        delivered_at: "2026-11-27T00:00:00.000Z",
        error_message: "HTTP 500 \x1b]0;title\x07",
      } as Parameters<typeof deliveryTable>[0][number],
    ]);
    expect(table).toContain("HTTP 500 \\x1b]0;title\\x07");
    expect(table).not.toContain("\x1b");
    expect(table).not.toContain("\x07");
  });
});
