import { useEffect, useRef, useState } from "preact/hooks";

// The msteams body as Teams would show it, drawn by Microsoft's Adaptive Cards SDK. The SDK (and the
// carousel library it brings) is a few hundred kB, so it is loaded only when a Teams preview is shown.
// It builds DOM nodes and sets styles through the CSSOM: no eval and no inline style attributes, so the
// dashboard's Content-Security-Policy holds. No markdown processor is set, so card text stays text.

const cardType = "application/vnd.microsoft.card.adaptive";

/** The card in a Workflows message (`{"type":"message","attachments":[{contentType, content}]}`). */
function cardOf(body: string): unknown {
  const message = JSON.parse(body) as { attachments?: { contentType?: string; content?: unknown }[] };
  const attachment = message.attachments?.find((item) => item.contentType === cardType);
  if (!attachment) throw new Error(`The body has no attachment of type ${cardType}.`);
  return attachment.content;
}

export function TeamsCard({ body }: { body: string }) {
  const target = useRef<HTMLDivElement>(null);
  const [problem, setProblem] = useState<string>();
  const [warnings, setWarnings] = useState<string[]>([]);
  useEffect(() => {
    let current = true;
    (async () => {
      const content = cardOf(body);
      const { AdaptiveCard, SerializationContext } = await import("adaptivecards");
      if (!current) return;
      const card = new AdaptiveCard();
      const context = new SerializationContext();
      card.parse(content, context);
      const rendered = card.render();
      if (!rendered) throw new Error("The Adaptive Cards SDK rendered nothing.");
      target.current?.replaceChildren(rendered);
      const events = Array.from({ length: context.eventCount }, (_, i) => context.getEventAt(i).message);
      setWarnings(events);
      setProblem(undefined);
    })().catch((error: unknown) => {
      if (!current) return;
      target.current?.replaceChildren();
      setProblem(error instanceof Error ? error.message : String(error));
    });
    return () => {
      current = false;
    };
  }, [body]);
  return (
    <figure class="teams-card">
      <figcaption class="small muted">As Microsoft Teams shows it (Adaptive Cards SDK)</figcaption>
      {problem && (
        <p class="field-error" role="status">
          The card could not be drawn: {problem}
        </p>
      )}
      {warnings.length > 0 && (
        <ul class="small muted">
          {warnings.map((warning) => (
            <li key={warning}>{warning}</li>
          ))}
        </ul>
      )}
      <div ref={target} class="teams-card-body" data-testid="teams-card" />
    </figure>
  );
}
