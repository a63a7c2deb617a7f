import { describe, expect, it } from "vitest";
import { fitText, linkableUrl, multiLine, oneLine } from "../../../src/formats/text-limits.js";

const html = (char: string) => (char === "<" ? "&lt;" : char);

describe("fitText", () => {
  it.each([
    ["short", 10, "short"],
    ["exactly10!", 10, "exactly10!"],
    ["eleven chars", 10, "eleven ch…"],
  ])("keeps what fits and cuts the rest with an ellipsis: %s", (text, max, expected) => {
    expect(fitText(text, max)).toBe(expected);
  });

  it("cuts on the escaped length and never inside an escape sequence", () => {
    const out = fitText("<<<<<<<<", 10, html);
    expect(out).toBe("&lt;&lt;…");
    expect(out.length).toBeLessThanOrEqual(10);
  });

  it("never splits a surrogate pair", () => {
    const out = fitText("🚀🚀🚀🚀🚀🚀", 6);
    expect(out).toBe("🚀🚀…");
    expect(() => encodeURIComponent(out)).not.toThrow(); // a lone surrogate would throw URIError
  });
});

describe("cleaning", () => {
  it("oneLine joins lines and drops control and bidi override characters", () => {
    expect(oneLine("  a\r\nb\tc\u0000d\u202ee\u2066f  ")).toBe("a b cdef");
  });

  it("multiLine keeps line breaks", () => {
    expect(multiLine("a\r\nb\rc\u0007")).toBe("a\nb\nc");
  });
});

describe("linkableUrl", () => {
  it.each([
    ["https://shop.example.com/x?y=1", "https://shop.example.com/x?y=1"],
    ["http://10.0.0.1:8080/", "http://10.0.0.1:8080/"],
    ["javascript:alert(1)", null],
    ["data:text/html,<b>x</b>", null],
    ["/relative/path", null],
    ["not a url", null],
    [`https://a.example/${"x".repeat(3000)}`, null],
  ])("%s → %s", (value, expected) => {
    expect(linkableUrl(value, 3000)).toBe(expected);
  });
});
