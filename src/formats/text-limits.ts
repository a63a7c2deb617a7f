/**
 * Cutting and escaping the text a user controls (commit messages, names, error messages) for a chat
 * service. Every service counts its limits in characters of the text as sent, after escaping, so a
 * value is escaped first and cut on the escaped length: an escape sequence is never split in two, and
 * a surrogate pair never either (lengths here are UTF-16 code units, which is never fewer than what the
 * services count).
 */

export const ellipsis = "…";

/** Escapes one character for a service's markup; returns it unchanged when it needs none. */
export type CharEscape = (char: string) => string;

export const noEscape: CharEscape = (char) => char;

/** The text escaped and, when longer than `max`, cut to fit `max` with a trailing ellipsis. */
export function fitText(text: string, max: number, escapeChar: CharEscape = noEscape): string {
  let out = "";
  let cut = false;
  const room = max - ellipsis.length;
  let fitsRoom = 0; // the length of `out` when it last fitted in `room`, where the cut goes
  for (const char of text) {
    const piece = escapeChar(char);
    if (out.length + piece.length <= room) fitsRoom = out.length + piece.length;
    if (out.length + piece.length > max) {
      cut = true;
      break;
    }
    out += piece;
  }
  return cut ? out.slice(0, fitsRoom) + ellipsis : out;
}

/**
 * C0 controls other than tab and line feed, DEL, and the bidirectional overrides that can make a line
 * read differently from what it holds (a commit message could otherwise show one thing, mean another).
 */
function isHiddenControl(code: number): boolean {
  return (
    (code <= 0x1f && code !== 0x09 && code !== 0x0a && code !== 0x0d) ||
    code === 0x7f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function withoutControls(text: string): string {
  let out = "";
  let from = 0; // copies the runs between hidden characters, so clean text is returned as it is
  for (let i = 0; i < text.length; i++) {
    if (isHiddenControl(text.charCodeAt(i))) {
      out += text.slice(from, i);
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** One line: line breaks and tabs become spaces, control characters go, ends are trimmed. */
export function oneLine(text: string): string {
  return withoutControls(text.replace(/[\r\n\t]+/g, " ")).trim();
}

/** Several lines, kept: CRLF becomes LF, tabs spaces, control characters go, ends are trimmed. */
export function multiLine(text: string): string {
  return withoutControls(text.replace(/\r\n?/g, "\n").replace(/\t/g, " ")).trim();
}

/**
 * The URL when it is an absolute http(s) URL a card can link to, else null: a `javascript:` or
 * relative value from an annotation must not become a button.
 */
export function linkableUrl(value: string | null, maxLength: number): string | null {
  if (value === null || value.length > maxLength) return null;
  try {
    const url = new URL(value);
    const linkable = (url.protocol === "https:" || url.protocol === "http:") && url.href.length <= maxLength;
    return linkable ? url.href : null;
  } catch {
    return null;
  }
}
