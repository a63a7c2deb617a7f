import type { ComponentChildren } from "preact";
import { Link } from "wouter-preact";
import { api } from "../api";
import { Outcome, When } from "../components/badges";
import { CodeBlock } from "../components/code-block";
import { ErrorBox, Loading } from "../components/errors";
import { Layout, SettingsFrame } from "../components/layout";
import { durationText, exactTime } from "../format";
import { useLoad } from "../use-load";
import { RequestCard } from "./delivery-request";
import { paths } from "./paths";
import { useProjectCrumbs } from "./project-crumbs";
import { Replay } from "./replay";

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
            <Replay key={d.id} projectId={projectId} webhookId={webhookId} delivery={d} />
            <dl class="card facts">
              <Fact name="Event id" value={<code>{d.event_id}</code>} />
              <Fact name="Attempt" value={String(d.attempt_number)} />
              <Fact
                name="Status code"
                value={d.status_code > 0 ? String(d.status_code) : "0 (no HTTP response)"}
              />
              <Fact
                name="Duration"
                value={
                  d.duration_ms !== null
                    ? durationText(d.duration_ms)
                    : d.request_headers === null
                      ? "none (no request was sent)"
                      : "not recorded"
                }
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

function Fact({ name, value }: { name: string; value: ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}
