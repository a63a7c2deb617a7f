import { useRef, useState } from "preact/hooks";
import { type ApiFailure, api } from "../api";
import type { RecoverResult, Webhook } from "../api-types";
import { ErrorBox } from "../components/errors";
import { EventTypeSelect } from "./event-type-select";

const windows = [
  { value: "1", label: "the last hour" },
  { value: "6", label: "the last 6 hours" },
  { value: "24", label: "the last 24 hours" },
  { value: "168", label: "the last 7 days" },
];

/**
 * "Recover failed…": queues a new attempt of every event whose latest attempt failed in a window (the
 * recover endpoint), after a confirmation that says what will happen. The workers send them; the
 * deliveries appear in the list as they are sent.
 */
export function RecoverFailed(props: { projectId: number; webhook: Webhook; onQueued: () => void }) {
  const { projectId, webhook } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const [hours, setHours] = useState("24");
  const [eventType, setEventType] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiFailure>();
  const [result, setResult] = useState<RecoverResult>();
  const label = windows.find((w) => w.value === hours)?.label ?? "";
  const submit = async (event: SubmitEvent) => {
    if ((event.submitter as HTMLButtonElement | null)?.value !== "recover") return;
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const since = new Date(Date.now() - Number(hours) * 3_600_000).toISOString();
      setResult(
        await api.recover(projectId, webhook.id, { since, ...(eventType ? { event_type: eventType } : {}) }),
      );
      dialog.current?.close();
      props.onQueued();
    } catch (failure) {
      setError(failure as ApiFailure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="recover">
      <h3>Recover failed deliveries</h3>
      <button
        type="button"
        class="button"
        disabled={!webhook.enabled}
        title={webhook.enabled ? undefined : "Enable the webhook first"}
        onClick={() => {
          setResult(undefined);
          dialog.current?.showModal();
        }}
      >
        Recover failed…
      </button>
      <div aria-live="polite" class="recover-result">
        {result && (
          <p>
            Queued {result.queued} {result.queued === 1 ? "delivery" : "deliveries"}; they appear in Recent
            deliveries as they are sent.
          </p>
        )}
      </div>
      <dialog ref={dialog} class="dialog" aria-labelledby="recover-title">
        <form method="dialog" onSubmit={submit}>
          <h2 id="recover-title">Recover failed deliveries</h2>
          <div class="recover-fields">
            <label>
              <span>Failed in</span>
              <select value={hours} onChange={(e) => setHours(e.currentTarget.value)}>
                {windows.map((w) => (
                  <option key={w.value} value={w.value}>
                    {w.label}
                  </option>
                ))}
              </select>
            </label>
            <EventTypeSelect value={eventType} onChange={setEventType} />
          </div>
          <p>
            Every event whose latest delivery to <strong class="url">{webhook.url}</strong> failed in {label}{" "}
            is sent again once, as a new attempt. Events that succeeded since, or are already on their way,
            are left out.
          </p>
          <ErrorBox error={error} />
          <div class="actions">
            <button type="submit" value="recover" class="button button-primary" disabled={busy}>
              {busy ? "Queueing…" : "Send them again"}
            </button>
            <button type="submit" value="cancel" class="button">
              Cancel
            </button>
          </div>
        </form>
      </dialog>
    </div>
  );
}
