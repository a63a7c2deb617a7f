import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { type ApiFailure, api } from "../api";
import type { Delivery, RetryResult, Webhook } from "../api-types";
import { Outcome, When } from "../components/badges";
import { ErrorBox, Loading } from "../components/errors";
import { Layout, SettingsFrame } from "../components/layout";
import { Segmented } from "../components/segmented";
import { exactTime, prettyJson } from "../format";
import { useLoad } from "../use-load";
import { paths } from "./paths";
import { useProjectCrumbs } from "./project-crumbs";

export function DeliveryPage(props: { projectId: number; webhookId: number; deliveryId: number }) {
  const { projectId, webhookId, deliveryId } = props;
  const delivery = useLoad(
    () => api.delivery(projectId, webhookId, deliveryId),
    [projectId, webhookId, deliveryId],
  );
  const webhook = useLoad(() => api.webhook(projectId, webhookId), [projectId, webhookId]);
  const crumbs = useProjectCrumbs(
    projectId,
    { label: webhook.data?.url ?? `Webhook ${webhookId}`, href: paths.webhook(projectId, webhookId) },
    { label: `Delivery ${deliveryId}` },
  );
  const d = delivery.data;
  return (
    <Layout crumbs={crumbs}>
      <SettingsFrame projectId={projectId}>
        <ErrorBox error={delivery.error} />
        {!d && !delivery.error && <Loading what="the delivery" />}
        {d && (
          <>
            <div class="page-head page-head-row">
              <div>
                <h1>
                  Delivery {d.id} <Outcome success={d.success} statusCode={d.status_code} />
                </h1>
                <p class="muted">
                  <code>{d.event_type}</code> · attempt {d.attempt_number} · <When iso={d.delivered_at} />
                </p>
              </div>
              <Link href={paths.webhook(projectId, webhookId)} class="button">
                Back to webhook
              </Link>
            </div>
            <Replay projectId={projectId} webhookId={webhookId} delivery={d} />
            <dl class="card facts">
              <Fact name="Event id" value={<code>{d.event_id}</code>} />
              <Fact name="Attempt" value={String(d.attempt_number)} />
              <Fact
                name="Status code"
                value={d.status_code > 0 ? String(d.status_code) : "0 (no HTTP response)"}
              />
              <Fact name="Queued" value={exactTime(d.created_at)} />
              <Fact name="Delivered" value={exactTime(d.delivered_at)} />
            </dl>
            {d.error_message && (
              <div class="alert alert-error" role="note">
                <strong>Error</strong>
                <p class="pre">{d.error_message}</p>
              </div>
            )}
            <RequestCard delivery={d} webhook={webhook.data} />
            <section class="card" aria-labelledby="response-title">
              <h2 id="response-title">Response</h2>
              <p>
                Status <strong>{d.status_code > 0 ? d.status_code : "none"}</strong>
              </p>
              <CodeBlock label="Response body" text={d.response_body === "" ? "(empty)" : d.response_body} />
            </section>
          </>
        )}
      </SettingsFrame>
    </Layout>
  );
}

function Fact({ name, value }: { name: string; value: preact.ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}

/**
 * The headers of spec §4.1 as sent. The timestamp and signature are computed at send time and not
 * stored, so those two are described rather than quoted.
 */
function RequestCard({ delivery, webhook }: { delivery: Delivery; webhook: Webhook | undefined }) {
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

function CodeBlock({ label, text, copyText }: { label: string; text: string; copyText?: string }) {
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

function Replay({
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
            {result.error_message && <span class="error-text"> {result.error_message}</span>}
          </p>
        )}
      </div>
      <ErrorBox error={error} title="Replay failed" />
    </section>
  );
}
