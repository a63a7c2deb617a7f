import { type TagToken, Tokenizer, type TopLevelToken } from "liquidjs";

/** Liquid's block tags: each opens a level that its `end…` tag closes. */
const blockTags = new Set(["if", "unless", "for", "case", "capture", "tablerow", "comment", "raw"]);

/**
 * The deepest nesting of block tags in a template, counted on its tokens before it is parsed: the
 * parser and the renderer recurse once per level, so a template of a few thousand nested `if`s would
 * exhaust the stack. Tags inside `{% liquid %}` count too, one per line as that tag reads them.
 */
export function nestingDepth(source: string): number {
  const tokens = new Tokenizer(source).readTopLevelTokens();
  let depth = 0;
  let deepest = 0;
  const visit = (name: string): void => {
    if (name.startsWith("end") && blockTags.has(name.slice(3))) depth = Math.max(0, depth - 1);
    else if (blockTags.has(name)) deepest = Math.max(deepest, ++depth);
  };
  for (const name of tagNames(tokens)) visit(name);
  return deepest;
}

function* tagNames(tokens: TopLevelToken[]): Generator<string> {
  let inComment = false; // a comment's body is text, whatever it looks like
  for (const token of tokens) {
    const name = (token as TagToken).name;
    if (typeof name !== "string") continue;
    if (inComment) {
      if (name === "endcomment") inComment = false;
      else continue;
    } else if (name === "comment") inComment = true;
    yield name;
    if (name === "liquid") {
      for (const line of (token as TagToken).args.split("\n")) {
        const word = line.trim().split(/\s+/)[0];
        if (word) yield word;
      }
    }
  }
}
