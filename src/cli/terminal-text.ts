// Text that others control (a receiver's answer, a tenant's URL, headers and payload fields) reaches
// the operator's terminal through the CLI's human output. A terminal obeys what it is sent: ESC and
// CSI sequences move the cursor and clear the screen, OSC sets the window title or writes the
// clipboard, a bare carriage return overwrites a line, and bidi overrides show text in another order
// than it is stored. So every code point of that kind is printed as a visible escape instead, and the
// text reads the same on a TTY, in a pipe and in a log. --json prints the API's JSON unchanged.

// \p{Cc}: C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F, where the one-byte CSI and OSC live).
// \p{Bidi_Control}: U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069. U+2028/U+2029 break lines
// in some terminals and editors.
const unsafe = /[\p{Cc}\p{Bidi_Control}\u2028\u2029]/gu;
const unsafeExceptNewline = /[^\n\P{Cc}]|[\p{Bidi_Control}\u2028\u2029]/gu;

const named: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function visible(character: string): string {
  const name = named[character];
  if (name) return name;
  const code = character.codePointAt(0) ?? 0;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
}

/**
 * `text` with every control character (C0, DEL, C1) and bidi control shown as an escape such as
 * `\x1b`, `\r` or `\u{202e}`. With `multiline`, line feeds stay (blocks such as a response body);
 * otherwise they show as `\n` too (table cells, one-line values). Backslashes are left as they are.
 */
export function terminalSafe(text: string, { multiline = false }: { multiline?: boolean } = {}): string {
  return text.replace(multiline ? unsafeExceptNewline : unsafe, visible);
}
