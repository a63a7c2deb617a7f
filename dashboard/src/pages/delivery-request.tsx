import { useState } from "preact/hooks";
import type { Delivery, Webhook } from "../api-types";
import { CodeBlock } from "../components/code-block";
import { Segmented } from "../components/segmented";
import { prettyJson } from "../format";

/**
 * The headers of spec §4.1 as sent. The timestamp and signature are computed at send time and not
 * stored, so those two are described rather than quoted.
 */
export function RequestCard({ delivery, webhook }: { delivery: Delivery; webhook: Webhook | undefined }) {
  const [raw, setRaw] = useState(false);
  const headers: [string, string][] = [
    ["Content-Type", "application/json"],
    ["X-Webhook-Event", delivery.event_type],
    ["X-Webhook-Delivery", String(delivery.id)],
    ["X-Webhook-Timestamp", "Unix seconds when sent (not stored)"],
  ];
  if (webhook?.has_secret)
    headers.push(["X-Webhook-Signature", 'sha256=HMAC-SHA256(secret, "<timestamp>.<body>")']);
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
          {headers.map(([name, value]) => (
            <tr key={name}>
              <th scope="row" class="mono">
                {name}
              </th>
              <td class="mono">{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <CodeBlock
        label="Request body"
        text={raw ? delivery.payload : prettyJson(delivery.payload)}
        copyText={delivery.payload}
      />
    </section>
  );
}
