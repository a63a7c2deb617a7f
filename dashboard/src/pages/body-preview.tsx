import { useEffect, useState } from "preact/hooks";
import { ApiFailure, api } from "../api";
import type { EventType } from "../api-types";
import { CodeBlock } from "../components/code-block";
import { HeaderRows } from "../components/header-rows";
import { prettyJson } from "../format";
import type { DeliveryPreview, DraftPreview } from "../webhook-formats";
import { TeamsCard } from "./teams-card";

// The live preview in the webhook form: the draft is rendered by the service (the same code that
// renders deliveries, nothing sent), shortly after the last keystroke.

/** Long enough to wait out a word being typed, short enough to feel live. */
const debounceMs = 400;

type PreviewState =
  | { state: "loading" }
  | { state: "shown"; preview: DeliveryPreview }
  | { state: "unavailable" }
  | { state: "failed"; message: string };

/** The draft as the preview operation takes it (the create body's fields), without `event_type`. */
export type PreviewDraft = Omit<DraftPreview, "event_type"> & { url: string; events: string[] };

/**
 * The body does not depend on the URL or the subscribed events, so a form without them yet still
 * previews: no events stand for the previewed one, and no URL for a name that never resolves (.invalid).
 */
const previewable = (draft: PreviewDraft, eventType: string): PreviewDraft => ({
  ...draft,
  url: draft.url.trim() === "" ? "https://receiver.invalid/" : draft.url,
  events: draft.events.length > 0 ? draft.events : [eventType],
});

/** Problems of the URL and events are shown beside those fields when saving; the preview only waits. */
const aboutOtherFields = (path: string) => /^body\.(url|events)(\.|$)/.test(path);

function usePreview(projectId: number, draft: PreviewDraft, eventType: string): PreviewState {
  const [result, setResult] = useState<PreviewState>({ state: "loading" });
  const key = JSON.stringify(draft);
  useEffect(() => {
    let current = true;
    const timer = setTimeout(async () => {
      try {
        // The draft's content, not its identity (a new object each render), decides when to ask again.
        const body = previewable(JSON.parse(key) as PreviewDraft, eventType);
        const preview = await api.previewDraft(projectId, { ...body, event_type: eventType });
        if (current) setResult({ state: "shown", preview });
      } catch (error) {
        if (!current) return;
        if (!(error instanceof ApiFailure)) throw error;
        // A service without the preview operation (an older version) answers 404: say so, once.
        if (error.status === 404 || error.status === 405) setResult({ state: "unavailable" });
        else {
          const own = error.details.filter((detail) => !aboutOtherFields(detail.path));
          const message =
            error.details.length > 0 && own.length === 0
              ? "The preview waits for a valid payload URL."
              : own.map((detail) => detail.message).join(" ") || error.message;
          setResult({ state: "failed", message });
        }
      }
    }, debounceMs);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [projectId, key, eventType]);
  return result;
}

export function BodyPreview(props: {
  projectId: number;
  draft: PreviewDraft;
  catalogue: EventType[] | undefined;
  /** Saved header names that the draft keeps without their values: listed, masked. */
  keptHeaders: string[];
  msteams: boolean;
}) {
  const [eventType, setEventType] = useState("deployment.succeeded");
  const result = usePreview(props.projectId, props.draft, eventType);
  return (
    <section class="field preview" aria-labelledby="preview-title" aria-busy={result.state === "loading"}>
      <div class="card-head">
        <h2 id="preview-title">Preview</h2>
        <label class="input-row small">
          Event
          <select value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
            {(props.catalogue?.map((type) => type.event_type) ?? ["deployment.succeeded"]).map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div aria-live="polite">
        {result.state === "loading" && <p class="muted">Rendering…</p>}
        {result.state === "unavailable" && (
          <p class="muted">Preview unavailable: this service does not offer previews.</p>
        )}
        {result.state === "failed" && (
          <p class="field-error" role="status">
            {result.message}
          </p>
        )}
        {result.state === "shown" && (
          <PreviewBody preview={result.preview} keptHeaders={props.keptHeaders} msteams={props.msteams} />
        )}
      </div>
    </section>
  );
}

function PreviewBody(props: { preview: DeliveryPreview; keptHeaders: string[]; msteams: boolean }) {
  const { preview } = props;
  const headers = Object.entries(preview.headers);
  const shown = new Set(headers.map(([name]) => name.toLowerCase()));
  for (const name of props.keptHeaders) if (!shown.has(name.toLowerCase())) headers.push([name, "********"]);
  // The headers as sent hold the Content-Type; a failed render has none to show.
  if (!shown.has("content-type") && preview.content_type)
    headers.unshift(["Content-Type", preview.content_type]);
  return (
    <>
      <table class="table headers" aria-label="Preview headers">
        <tbody>
          <HeaderRows headers={headers} />
        </tbody>
      </table>
      {preview.body === null ? (
        <p class="field-error" role="status">
          {preview.error ?? "The body could not be rendered."} Deliveries of this event would fail with this
          message and send nothing.
        </p>
      ) : (
        <>
          <CodeBlock label="Body" text={prettyJson(preview.body)} copyText={preview.body} />
          {props.msteams && <TeamsCard body={preview.body} />}
        </>
      )}
    </>
  );
}
