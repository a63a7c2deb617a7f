import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { type ApiFailure, api } from "../api";
import type { Delivery, RetryResult } from "../api-types";
import { Outcome } from "../components/badges";
import { ErrorBox } from "../components/errors";
import { paths } from "./paths";

/** Replays the delivery and shows the new attempt's result in place, with a link to its record. */
export function Replay({
  projectId,
  webhookId,
  delivery,
}: {
  projectId: number;
  webhookId: number;
  delivery: Delivery;
}) {
  const [result, setResult] = useState<RetryResult>();
  const [error, setError] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);
  const replay = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setResult(await api.replay(projectId, webhookId, delivery.id));
    } catch (failure) {
      setError(failure as ApiFailure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card replay" aria-labelledby="replay-title">
      <div class="card-head">
        <div>
          <h2 id="replay-title">Replay</h2>
          <p class="muted small">Sends the same event (same id and body) again as a new attempt.</p>
        </div>
        <button
          type="button"
          class={`button ${delivery.success ? "" : "button-primary"}`}
          disabled={busy}
          onClick={replay}
        >
          {busy ? "Replaying…" : "Replay"}
        </button>
      </div>
      <div aria-live="polite" class="replay-result">
        {result && (
          <p>
            Attempt <strong>{result.attempt_number}</strong>:{" "}
            <Outcome success={result.success} statusCode={result.status_code} />
            {result.error_message && <span class="error-text"> {result.error_message}</span>}{" "}
            <Link href={paths.delivery(projectId, webhookId, result.delivery_id)}>
              Open delivery {result.delivery_id}
            </Link>
          </p>
        )}
      </div>
      <ErrorBox error={error} title="Replay failed" />
    </section>
  );
}
