import { useRef, useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { type ApiFailure, api } from "../api";
import type { TestEventResult, Webhook } from "../api-types";
import { Outcome } from "../components/badges";
import { ErrorBox } from "../components/errors";
import { emittedEventTypes } from "./event-summary";
import { paths } from "./paths";
import { RecoverFailed } from "./recover-failed";

/**
 * Edit, enable/disable and delete (not offered for a managed webhook), the test event and recovering
 * failed deliveries (offered for managed webhooks too: neither is a write to the webhook).
 */
export function WebhookActions(props: {
  projectId: number;
  webhook: Webhook;
  onChange: (w: Webhook) => void;
  onTest: () => void;
}) {
  const { projectId, webhook } = props;
  const [, navigate] = useLocation();
  const [error, setError] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(failure as ApiFailure);
    } finally {
      setBusy(false);
    }
  };
  const managed = webhook.managed_by !== null;
  return (
    <section class="card" aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      <ErrorBox error={error} />
      {!managed && (
        <div class="actions">
          <Link href={paths.editWebhook(projectId, webhook.id)} class="button">
            Edit
          </Link>
          <button
            type="button"
            class="button"
            disabled={busy}
            onClick={() =>
              run(async () =>
                props.onChange(await api.updateWebhook(projectId, webhook.id, { enabled: !webhook.enabled })),
              )
            }
          >
            {webhook.enabled ? "Disable" : "Enable"}
          </button>
          <button type="button" class="button button-danger" onClick={() => dialog.current?.showModal()}>
            Delete
          </button>
        </div>
      )}
      <TestEvent projectId={projectId} webhookId={webhook.id} onSent={props.onTest} />
      <RecoverFailed projectId={projectId} webhook={webhook} onQueued={props.onTest} />
      <dialog ref={dialog} class="dialog" aria-labelledby="delete-title">
        <form
          method="dialog"
          onSubmit={(event) => {
            if ((event.submitter as HTMLButtonElement | null)?.value !== "delete") return;
            event.preventDefault();
            void run(async () => {
              await api.deleteWebhook(projectId, webhook.id);
              dialog.current?.close();
              navigate(paths.webhooks(projectId));
            });
          }}
        >
          <h2 id="delete-title">Delete this webhook?</h2>
          <p>
            Deliveries to <strong class="url">{webhook.url}</strong> stop, and its delivery history is
            deleted. This cannot be undone.
          </p>
          <div class="actions">
            <button type="submit" value="delete" class="button button-danger" disabled={busy}>
              Delete webhook
            </button>
            <button type="submit" value="cancel" class="button">
              Cancel
            </button>
          </div>
        </form>
      </dialog>
    </section>
  );
}

function TestEvent({
  projectId,
  webhookId,
  onSent,
}: {
  projectId: number;
  webhookId: number;
  onSent: () => void;
}) {
  const [eventType, setEventType] = useState("deployment.succeeded");
  const [result, setResult] = useState<TestEventResult>();
  const [error, setError] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);
  const send = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    try {
      setResult(await api.sendTestEvent(projectId, webhookId, eventType));
      onSent();
    } catch (failure) {
      setError(failure as ApiFailure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="test-event" onSubmit={send}>
      <h3>Send a test event</h3>
      <div class="input-row">
        <label for="test-event-type" class="visually-hidden">
          Test event type
        </label>
        <select id="test-event-type" value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
          {emittedEventTypes.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? "Sending…" : "Send test event"}
        </button>
      </div>
      <div aria-live="polite" class="test-result">
        {result && (
          <p>
            <Outcome success={result.success} statusCode={result.status_code} />{" "}
            <Link href={paths.delivery(projectId, webhookId, result.delivery_id)}>
              Delivery {result.delivery_id}
            </Link>
            {result.error_message && <span class="error-text"> {result.error_message}</span>}
          </p>
        )}
      </div>
      <ErrorBox error={error} />
    </form>
  );
}
