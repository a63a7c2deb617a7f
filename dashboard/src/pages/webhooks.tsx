import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { type ApiFailure, api } from "../api";
import type { Webhook } from "../api-types";
import { Badge, Outcome, When } from "../components/badges";
import { ErrorBox, Loading } from "../components/errors";
import { Layout, SettingsFrame } from "../components/layout";
import { percent } from "../format";
import { useLoad } from "../use-load";
import { eventSummary } from "./event-summary";
import { paths } from "./paths";
import { useProjectCrumbs } from "./project-crumbs";

export function WebhooksPage({ projectId }: { projectId: number }) {
  const webhooks = useLoad(() => api.webhooks(projectId), [projectId]);
  const crumbs = useProjectCrumbs(projectId);
  const [toggleError, setToggleError] = useState<ApiFailure>();
  const replace = (updated: Webhook) =>
    webhooks.set((webhooks.data ?? []).map((w) => (w.id === updated.id ? updated : w)));

  return (
    <Layout crumbs={crumbs}>
      <SettingsFrame projectId={projectId}>
        <div class="page-head page-head-row">
          <div>
            <h1>Webhooks</h1>
            <p class="muted">
              Webhooks send a signed POST to your URL when a deployment of this project is created, becomes
              ready, succeeds, fails or is cancelled.
            </p>
          </div>
          <Link href={paths.newWebhook(projectId)} class="button button-primary">
            Add webhook
          </Link>
        </div>
        <ErrorBox error={webhooks.error ?? toggleError} />
        {!webhooks.data && !webhooks.error && <Loading what="webhooks" />}
        {webhooks.data?.length === 0 && (
          <div class="empty card">
            <h2>No webhooks yet</h2>
            <p class="muted">Add one to be told about this project's deployments as they happen.</p>
            <Link href={paths.newWebhook(projectId)} class="button button-primary">
              Add webhook
            </Link>
          </div>
        )}
        {webhooks.data && webhooks.data.length > 0 && (
          <div class="card table-card">
            <table class="table table-webhooks">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Last delivery</th>
                  <th scope="col" class="num">
                    24 h success
                  </th>
                </tr>
              </thead>
              <tbody>
                {webhooks.data.map((webhook) => (
                  <WebhookRow
                    key={webhook.id}
                    projectId={projectId}
                    webhook={webhook}
                    onChange={replace}
                    onError={setToggleError}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </SettingsFrame>
    </Layout>
  );
}

function WebhookRow({
  projectId,
  webhook,
  onChange,
  onError,
}: {
  projectId: number;
  webhook: Webhook;
  onChange: (webhook: Webhook) => void;
  onError: (error: ApiFailure | undefined) => void;
}) {
  const stats = useLoad(() => api.stats(projectId, webhook.id, "24h"), [projectId, webhook.id]);
  const [busy, setBusy] = useState(false);
  const toggle = async () => {
    setBusy(true);
    onError(undefined);
    try {
      onChange(await api.updateWebhook(projectId, webhook.id, { enabled: !webhook.enabled }));
    } catch (failure) {
      onError(failure as ApiFailure);
    } finally {
      setBusy(false);
    }
  };
  const last = stats.data?.last_delivery;
  const total = (stats.data?.succeeded ?? 0) + (stats.data?.failed ?? 0);
  return (
    <tr>
      <td data-label="URL">
        <Link href={paths.webhook(projectId, webhook.id)} class="strong url">
          {webhook.url}
        </Link>
        <div class="tags">
          {webhook.has_secret ? <Badge tone="info">Signed</Badge> : <Badge tone="muted">Unsigned</Badge>}
          {webhook.disabled_reason !== null && <Badge tone="warn">Disabled automatically</Badge>}
          {webhook.retry_policy && (
            <Badge tone="info">Retries: up to {webhook.retry_policy.max_attempts}</Badge>
          )}
          {webhook.managed_by && (
            <Badge tone="warn">
              Managed by Webhook {webhook.managed_by.namespace}/{webhook.managed_by.name}
            </Badge>
          )}
        </div>
      </td>
      <td data-label="Events">{eventSummary(webhook.events)}</td>
      <td data-label="Enabled">
        <label class="switch">
          <input
            type="checkbox"
            role="switch"
            checked={webhook.enabled}
            aria-checked={webhook.enabled}
            disabled={busy || webhook.managed_by !== null}
            onChange={toggle}
            aria-label={`Enabled: ${webhook.url}`}
            title={webhook.managed_by ? "Managed by a Webhook resource: change it with kubectl" : undefined}
          />
          <span class="switch-track" aria-hidden="true" />
          <span class="switch-text">{webhook.enabled ? "On" : "Off"}</span>
        </label>
      </td>
      <td data-label="Last delivery">
        {last ? (
          <span class="stack">
            <Outcome success={last.success} statusCode={last.status_code} />
            <span class="muted small">
              {last.event_type} · <When iso={last.delivered_at} />
            </span>
          </span>
        ) : (
          <span class="muted">{stats.data ? "None yet" : "…"}</span>
        )}
      </td>
      <td data-label="24 h success" class="num">
        {stats.data ? (
          <span title={`${stats.data.succeeded} of ${total} in the last 24 hours`}>
            {percent(stats.data.succeeded, total)}
          </span>
        ) : (
          "…"
        )}
      </td>
    </tr>
  );
}
