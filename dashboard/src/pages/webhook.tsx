import { useState } from "preact/hooks";
import { api } from "../api";
import { Badge, When } from "../components/badges";
import { ErrorBox, Loading } from "../components/errors";
import { HealthChart } from "../components/health-chart";
import { Layout, SettingsFrame } from "../components/layout";
import { Segmented } from "../components/segmented";
import { useLoad } from "../use-load";
import { DeliveriesTable } from "./deliveries-table";
import { AutoDisabledNotice, DeliveryPolicy } from "./delivery-policy";
import { eventSummary } from "./event-summary";
import { FilterCheckCard } from "./filter-check";
import { FilterSummary } from "./filter-fields";
import { FormatSummary } from "./format-summary";
import { ManagedNotice } from "./managed-notice";
import { ThrottledBadge } from "./pace-summary";
import { useProjectCrumbs } from "./project-crumbs";
import { WebhookActions } from "./webhook-actions";

export function WebhookPage({ projectId, webhookId }: { projectId: number; webhookId: number }) {
  const webhook = useLoad(() => api.webhook(projectId, webhookId), [projectId, webhookId]);
  const [range, setRange] = useState<"24h" | "30d">("24h");
  // Bumped after a test event: the chart and the deliveries reload.
  const [version, setVersion] = useState(0);
  const stats = useLoad(() => api.stats(projectId, webhookId, range), [projectId, webhookId, range, version]);
  const crumbs = useProjectCrumbs(projectId, { label: webhook.data?.url ?? `Webhook ${webhookId}` });
  const w = webhook.data;
  return (
    <Layout crumbs={crumbs}>
      <SettingsFrame projectId={projectId}>
        <ErrorBox error={webhook.error} />
        {!w && !webhook.error && <Loading what="the webhook" />}
        {w && (
          <>
            <div class="page-head">
              <h1 class="url">{w.url}</h1>
              <div class="tags">
                {w.enabled ? (
                  <Badge tone="ok">Enabled</Badge>
                ) : w.disabled_reason !== null ? (
                  <Badge tone="warn">Disabled automatically</Badge>
                ) : (
                  <Badge tone="muted">Disabled</Badge>
                )}
                {w.has_secret ? <Badge tone="info">Signed</Badge> : <Badge tone="muted">Unsigned</Badge>}
                <ThrottledBadge webhook={w} />
                <span class="muted small">
                  {eventSummary(w.events)} · created <When iso={w.created_at} /> · updated{" "}
                  <When iso={w.updated_at} />
                </span>
              </div>
            </div>
            <AutoDisabledNotice webhook={w} />
            <ManagedNotice webhook={w} />
            <div class="grid-2">
              <section class="card" aria-labelledby="health-title">
                <div class="card-head">
                  <h2 id="health-title">Delivery health</h2>
                  <Segmented
                    label="Time range"
                    options={[
                      { value: "24h", label: "24 hours" },
                      { value: "30d", label: "30 days" },
                    ]}
                    value={range}
                    onChange={setRange}
                  />
                </div>
                <ErrorBox error={stats.error} />
                {stats.data ? (
                  <HealthChart stats={stats.data} />
                ) : (
                  !stats.error && <Loading what="delivery health" />
                )}
              </section>
              <WebhookActions
                projectId={projectId}
                webhook={w}
                onChange={webhook.set}
                onTest={() => setVersion(version + 1)}
              />
            </div>
            <section class="card subscribed">
              <h2>Subscribed events</h2>
              <ul class="chips">
                {w.events.map((event) => (
                  <li key={event}>
                    <code>{event}</code>
                  </li>
                ))}
              </ul>
            </section>
            <FilterSummary webhook={w} />
            <FilterCheckCard projectId={projectId} webhookId={webhookId} />
            <FormatSummary webhook={w} />
            <DeliveryPolicy webhook={w} />
            <DeliveriesTable projectId={projectId} webhookId={webhookId} version={version} />
          </>
        )}
      </SettingsFrame>
    </Layout>
  );
}
