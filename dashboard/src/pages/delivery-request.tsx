import { useState } from "preact/hooks";
import type { Delivery, Webhook } from "../api-types";
import { CodeBlock } from "../components/code-block";
import { HeaderRows } from "../components/header-rows";
import { Segmented } from "../components/segmented";
import { prettyJson } from "../format";

/**
 * The delivery headers exactly as sent (request_headers). Attempts recorded before the service kept
 * the timestamp and signature, and attempts never sent (a refused destination), have none: the card
 * says so and shows what it knows.
 */
export function RequestCard({ delivery, webhook }: { delivery: Delivery; webhook: Webhook | undefined }) {
  const [raw, setRaw] = useState(false);
  const recorded = delivery.request_headers;
  const headers: [string, string][] = recorded
    ? Object.entries(recorded)
    : [
        ["Content-Type", "application/json"],
        ["X-Webhook-Event", delivery.event_type],
        ["X-Webhook-Delivery", String(delivery.id)],
      ];
  return (
    <section class="card" aria-labelledby="request-title">
      <div class="card-head">
        <h2 id="request-title">Request</h2>
        <Segmented
          label="Body view"
          options={[
            { value: "pretty", label: "Pretty" },
            { value: "raw", label: "Raw" },
          ]}
          value={raw ? "raw" : "pretty"}
          onChange={(view) => setRaw(view === "raw")}
        />
      </div>
      <p class="mono small">POST {webhook?.url ?? ""}</p>
      <table class="table headers" aria-label="Request headers">
        <tbody>
          <HeaderRows headers={headers} />
        </tbody>
      </table>
      {recorded ? null : (
        <p class="muted small">
          {delivery.status_code === 0 && /^(Destination refused|Not sent)/.test(delivery.error_message ?? "")
            ? "No request was sent for this attempt (see the error below)."
            : "X-Webhook-Timestamp and X-Webhook-Signature were not recorded for this attempt (it predates the version that keeps them)."}
        </p>
      )}
      <CodeBlock
        label="Request body"
        text={raw ? delivery.payload : prettyJson(delivery.payload)}
        copyText={delivery.payload}
      />
    </section>
  );
}
