import { useEffect, useState } from "preact/hooks";
import { useLocation } from "wouter-preact";
import { ApiFailure, api } from "../api";
import type { Webhook } from "../api-types";
import { ErrorBox, FieldError, Loading } from "../components/errors";
import { Layout, SettingsFrame } from "../components/layout";
import { useServiceInfo } from "../service-info";
import { useLoad } from "../use-load";
import { BodyPreview } from "./body-preview";
import { PolicyFields, policyBody, policyValuesOf } from "./delivery-policy";
import { EventPicker } from "./event-picker";
import { FilterFields, filtersBody, filterValuesOf } from "./filter-fields";
import { changedFormatBody, FormatFields, formatValuesOf, fullFormatBody } from "./format-fields";
import { HeaderFields, headersBody, headerValuesOf } from "./header-fields";
import { ManagedNotice } from "./managed-notice";
import { paths } from "./paths";
import { useProjectCrumbs } from "./project-crumbs";
import { RateLimitField, rateLimitBody, rateLimitValuesOf } from "./rate-limit-field";
import { type SecretAction, SecretField } from "./secret-field";
import { UrlSecretField, urlSecretBody } from "./url-secret-field";

const fields = [
  "url",
  "url_secret",
  "events",
  "secret",
  "enabled",
  "retry_policy",
  "auto_disable",
  "rate_limit",
  "format",
  "cloudevents_mode",
  "template",
  "template_content_type",
  "signature_scheme",
  "headers",
  "filters",
  "rollout_details",
] as const;
type Field = (typeof fields)[number];

/** Which field an API 400 detail concerns ("body.events.2" → events); others show above the form. */
function fieldOf(path: string): Field | undefined {
  const name = path.split(".")[1];
  return fields.find((field) => field === name);
}

export function NewWebhookPage({ projectId }: { projectId: number }) {
  return <WebhookFormPage projectId={projectId} webhook={undefined} />;
}

export function EditWebhookPage({ projectId, webhookId }: { projectId: number; webhookId: number }) {
  const webhook = useLoad(() => api.webhook(projectId, webhookId), [projectId, webhookId]);
  const crumbs = useProjectCrumbs(projectId, { label: "Edit" });
  if (!webhook.data) {
    return (
      <Layout crumbs={crumbs}>
        <SettingsFrame projectId={projectId}>
          <ErrorBox error={webhook.error} />
          {!webhook.error && <Loading what="the webhook" />}
        </SettingsFrame>
      </Layout>
    );
  }
  return <WebhookFormPage projectId={projectId} webhook={webhook.data} />;
}

function WebhookFormPage({ projectId, webhook }: { projectId: number; webhook: Webhook | undefined }) {
  const [, navigate] = useLocation();
  const catalogue = useLoad(() => api.eventTypes(), []);
  const kubernetes = useServiceInfo()?.kubernetes;
  const crumbs = useProjectCrumbs(
    projectId,
    ...(webhook
      ? [{ label: webhook.url, href: paths.webhook(projectId, webhook.id) }, { label: "Edit" }]
      : [{ label: "Add webhook" }]),
  );
  const [url, setUrl] = useState(webhook?.url ?? "");
  const [urlSecret, setUrlSecret] = useState(webhook?.url_secret ?? false);
  const [events, setEvents] = useState<string[]>(webhook?.events ?? []);
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [rolloutDetails, setRolloutDetails] = useState(webhook?.rollout_details ?? false);
  const [policy, setPolicy] = useState(policyValuesOf(webhook));
  const [rateLimit, setRateLimit] = useState(rateLimitValuesOf(webhook));
  const [secretAction, setSecretAction] = useState<SecretAction>(webhook ? "keep" : "replace");
  const [secret, setSecret] = useState("");
  const saved = webhook;
  const [formatValues, setFormatValues] = useState(formatValuesOf(saved));
  const savedHeaderNames = saved ? (saved.header_names ?? []) : undefined;
  const [headerValues, setHeaderValues] = useState(headerValuesOf(savedHeaderNames, !webhook));
  const [filterValues, setFilterValues] = useState(filterValuesOf(saved));
  const [problems, setProblems] = useState<Partial<Record<Field, string>>>({});
  const [failure, setFailure] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);
  useEffect(() => setFailure(catalogue.error), [catalogue.error]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setProblems({});
    setFailure(undefined);
    const filtering = filtersBody(filterValues);
    if ("problem" in filtering) {
      setProblems({ filters: filtering.problem });
      return;
    }
    // Sent when set, or to remove the saved ones: a form without filters sends what it always did.
    const filterChange = filtering.filters || saved?.filters ? { filters: filtering.filters } : {};
    setBusy(true);
    const secretChange =
      secretAction === "keep"
        ? {}
        : secretAction === "remove"
          ? { secret: null }
          : secret === "" && !webhook
            ? {}
            : { secret };
    // Only what changed: a form saved without touching the format sends the body it always did.
    const formatChange = {
      ...urlSecretBody(urlSecret, saved),
      ...changedFormatBody(formatValues, saved),
      ...headersBody(headerValues, !webhook),
      ...filterChange,
      ...(rolloutDetails !== (saved?.rollout_details ?? false) ? { rollout_details: rolloutDetails } : {}),
    };
    try {
      const saved = webhook
        ? await api.updateWebhook(projectId, webhook.id, {
            url,
            events,
            enabled,
            ...secretChange,
            ...policyBody(policy),
            ...rateLimitBody(rateLimit, webhook),
            ...formatChange,
          })
        : await api.createWebhook(projectId, {
            url,
            events,
            enabled,
            ...secretChange,
            ...policyBody(policy),
            ...rateLimitBody(rateLimit, webhook),
            ...formatChange,
          });
      navigate(paths.webhook(projectId, saved.id));
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      const byField: Partial<Record<Field, string>> = {};
      const rest = [];
      for (const detail of error.details) {
        const field = fieldOf(detail.path);
        if (field) byField[field] = byField[field] ? `${byField[field]} ${detail.message}` : detail.message;
        else rest.push(detail);
      }
      setProblems(byField);
      if (rest.length > 0 || error.details.length === 0) setFailure(error);
      else setFailure(new ApiFailure(400, "validation_failed", "Some fields need attention; see below."));
    } finally {
      setBusy(false);
    }
  };

  if (webhook?.managed_by) {
    return (
      <Layout crumbs={crumbs}>
        <SettingsFrame projectId={projectId}>
          <h1>Edit webhook</h1>
          <ManagedNotice webhook={webhook} />
        </SettingsFrame>
      </Layout>
    );
  }

  return (
    <Layout crumbs={crumbs}>
      <SettingsFrame projectId={projectId}>
        <div class="page-head">
          <h1>{webhook ? "Edit webhook" : "Add webhook"}</h1>
          <p class="muted">We send a POST with a JSON body to this URL for each event you choose.</p>
        </div>
        <ErrorBox error={failure} title="The webhook was not saved" />
        <form class="card form" onSubmit={submit} noValidate>
          <div class="field">
            <label for="url">Payload URL</label>
            <input
              id="url"
              type="url"
              inputMode="url"
              placeholder="https://example.com/hooks/deployments"
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
              aria-invalid={problems.url ? true : undefined}
              aria-describedby={problems.url ? "url-error" : "url-help"}
            />
            <FieldError id="url-error" message={problems.url} />
            {!problems.url && (
              <p id="url-help" class="help">
                {kubernetes
                  ? "Use https:// for receivers outside the cluster."
                  : "Use https:// for receivers on other machines."}
              </p>
            )}
          </div>
          <UrlSecretField
            checked={urlSecret}
            onChange={setUrlSecret}
            saved={webhook?.url_secret ?? false}
            problem={problems.url_secret}
          />

          <EventPicker
            catalogue={catalogue.data}
            selected={events}
            onChange={setEvents}
            problem={problems.events}
          />

          <FormatFields
            values={formatValues}
            onChange={setFormatValues}
            problems={{
              format: problems.format,
              cloudevents_mode: problems.cloudevents_mode,
              signature_scheme: problems.signature_scheme,
              template: problems.template,
              template_content_type: problems.template_content_type,
            }}
          />

          <BodyPreview
            projectId={projectId}
            draft={{
              url,
              events,
              ...(secretAction === "replace" && secret !== "" ? { secret } : {}),
              ...fullFormatBody(formatValues),
              ...headersBody(headerValues, true),
            }}
            catalogue={catalogue.data}
            keptHeaders={headerValues.action === "keep" ? (savedHeaderNames ?? []) : []}
            msteams={formatValues.format === "msteams"}
          />

          <FilterFields values={filterValues} onChange={setFilterValues} problem={problems.filters} />

          <HeaderFields
            savedNames={savedHeaderNames}
            values={headerValues}
            onChange={setHeaderValues}
            problem={problems.headers}
          />

          <SecretField
            hasSecret={webhook?.has_secret}
            action={secretAction}
            onAction={setSecretAction}
            secret={secret}
            onSecret={setSecret}
            problem={problems.secret}
          />

          <PolicyFields
            values={policy}
            onChange={setPolicy}
            problems={{ retry_policy: problems.retry_policy, auto_disable: problems.auto_disable }}
          />
          <RateLimitField values={rateLimit} onChange={setRateLimit} problem={problems.rate_limit} />

          <div class="field">
            <label class="check">
              <input
                type="checkbox"
                checked={enabled}
                onChange={(e) => setEnabled(e.currentTarget.checked)}
              />
              <span>
                <strong>Enabled</strong>
                <span class="help">A disabled webhook receives no deliveries (test events still send).</span>
              </span>
            </label>
            <FieldError id="enabled-error" message={problems.enabled} />
          </div>

          <div class="field">
            <label class="check">
              <input
                type="checkbox"
                checked={rolloutDetails}
                onChange={(e) => setRolloutDetails(e.currentTarget.checked)}
              />
              <span>
                <strong>Rollout details</strong>
                <span class="help">
                  Rollout events also carry <code>payload.rollout</code>: images before and after, version
                  labels, links, and why a failed rollout failed.
                </span>
              </span>
            </label>
            <FieldError id="rollout_details-error" message={problems.rollout_details} />
          </div>

          <div class="actions">
            <button type="submit" class="button button-primary" disabled={busy}>
              {busy ? "Saving…" : webhook ? "Save changes" : "Add webhook"}
            </button>
            <button
              type="button"
              class="button"
              onClick={() =>
                navigate(webhook ? paths.webhook(projectId, webhook.id) : paths.webhooks(projectId))
              }
            >
              Cancel
            </button>
          </div>
        </form>
      </SettingsFrame>
    </Layout>
  );
}
