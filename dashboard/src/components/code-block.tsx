import { useState } from "preact/hooks";

/** Monospace text with a Copy button (copyText when the shown text is a pretty-printed form of it). */
export function CodeBlock({ label, text, copyText }: { label: string; text: string; copyText?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(copyText ?? text);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <div class="codeblock">
      <div class="codeblock-head">
        <span class="small muted">{label}</span>
        <button type="button" class="button button-small" onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling block must take focus to scroll by keyboard */}
      <pre class="code" tabIndex={0}>
        {text}
      </pre>
    </div>
  );
}
