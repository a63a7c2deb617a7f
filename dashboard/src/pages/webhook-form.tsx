import { useEffect, useState } from "preact/hooks";
import { useLocation } from "wouter-preact";
import { ApiFailure, api } from "../api";
import type { EventType, Webhook } from "../api-types";
import { ErrorBox, Loading } from "../components/errors";
import { Layout, SettingsFrame } from "../components/layout";
import { generateSecret } from "../format";
import { useLoad } from "../use-load";
import { isEmitted } from "./event-summary";
import { ManagedNotice } from "./managed-notice";
import { paths } from "./paths";
import { useProjectCrumbs } from "./project-crumbs";

type SecretAction = "keep" | "replace" | "remove";
type Field = "url" | "events" | "secret" | "enabled";

/** Which field an API 400 detail concerns ("body.events.2" → events); others show above the form. */
function fieldOf(path: string): Field | undefined {
  const name = path.split(".")[1];
  return name === "url" || name === "events" || name === "secret" || name === "enabled" ? name : undefined;
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
  const crumbs = useProjectCrumbs(
    projectId,
    ...(webhook
      ? [{ label: webhook.url, href: paths.webhook(projectId, webhook.id) }, { label: "Edit" }]
      : [{ label: "Add webhook" }]),
  );
  const [url, setUrl] = useState(webhook?.url ?? "");
  const [events, setEvents] = useState<string[]>(webhook?.events ?? []);
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [secretAction, setSecretAction] = useState<SecretAction>(webhook ? "keep" : "replace");
  const [secret, setSecret] = useState("");
  const [revealed, setRevealed] = useState(false);
  const [problems, setProblems] = useState<Partial<Record<Field, string>>>({});
  const [failure, setFailure] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);
  const types = catalogue.data ?? [];
  const all = types.length > 0 && types.every((t) => events.includes(t.event_type));
  useEffect(() => setFailure(catalogue.error), [catalogue.error]);

  const toggle = (name: string, on: boolean) =>
    setEvents(on ? [...events, name] : events.filter((event) => event !== name));

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblems({});
    setFailure(undefined);
    const secretChange =
      secretAction === "keep"
        ? {}
        : secretAction === "remove"
          ? { secret: null }
          : secret === "" && !webhook
            ? {}
            : { secret };
    try {
      const saved = webhook
        ? await api.updateWebhook(projectId, webhook.id, { url, events, enabled, ...secretChange })
        : await api.createWebhook(projectId, { url, events, enabled, ...secretChange });
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

  const categories = [...new Set(types.map((t) => t.category))];
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
                Use https:// for receivers outside the cluster.
              </p>
            )}
          </div>

          <fieldset class="field" aria-describedby={problems.events ? "events-error" : undefined}>
            <legend>Events</legend>
            {!catalogue.data && !catalogue.error && <Loading what="event types" />}
            {types.length > 0 && (
              <label class="check check-all">
                <input
                  type="checkbox"
                  checked={all}
                  onChange={(e) => setEvents(e.currentTarget.checked ? types.map((t) => t.event_type) : [])}
                />
                <span>
                  <strong>All events</strong>
                  <span class="help">Every event type, including those not emitted yet.</span>
                </span>
              </label>
            )}
            {categories.map((category) => (
              <EventGroup
                key={category}
                category={category}
                types={types.filter((t) => t.category === category)}
                selected={events}
                onToggle={toggle}
              />
            ))}
            <FieldError id="events-error" message={problems.events} />
          </fieldset>

          <fieldset class="field">
            <legend>Secret</legend>
            <p class="help">
              With a secret every delivery carries <code>X-Webhook-Signature</code>, an HMAC-SHA256 your
              receiver can verify. The secret is never shown again once saved.
            </p>
            {webhook && (
              <>
                <p>Currently: {webhook.has_secret ? <strong>set</strong> : <strong>not set</strong>}</p>
                <div class="radios">
                  {(["keep", "replace", "remove"] as const)
                    .filter((action) => action !== "remove" || webhook.has_secret)
                    .map((action) => (
                      <label class="check" key={action}>
                        <input
                          type="radio"
                          name="secret-action"
                          checked={secretAction === action}
                          onChange={() => setSecretAction(action)}
                        />
                        {action === "keep"
                          ? "Keep it as it is"
                          : action === "remove"
                            ? "Remove it (deliveries are sent unsigned)"
                            : webhook.has_secret
                              ? "Replace it"
                              : "Set one"}
                      </label>
                    ))}
                </div>
              </>
            )}
            {secretAction === "replace" && (
              <>
                <label for="secret">{webhook ? "New secret" : "Secret (optional)"}</label>
                <div class="input-row">
                  <input
                    id="secret"
                    type={revealed ? "text" : "password"}
                    autocomplete="new-password"
                    spellcheck={false}
                    value={secret}
                    onInput={(e) => setSecret(e.currentTarget.value)}
                    aria-invalid={problems.secret ? true : undefined}
                    aria-describedby={problems.secret ? "secret-error" : undefined}
                  />
                  <button type="button" class="button" onClick={() => setRevealed(!revealed)}>
                    {revealed ? "Hide" : "Show"}
                  </button>
                  <button
                    type="button"
                    class="button"
                    onClick={() => {
                      setSecret(generateSecret());
                      setRevealed(true);
                    }}
                  >
                    Generate
                  </button>
                </div>
                <FieldError id="secret-error" message={problems.secret} />
              </>
            )}
          </fieldset>

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

function EventGroup(props: {
  category: string;
  types: EventType[];
  selected: string[];
  onToggle: (name: string, on: boolean) => void;
}) {
  const emitted = isEmitted(props.category);
  return (
    <div class="event-group">
      <h3>
        {props.category}
        {!emitted && <span class="badge badge-muted">not emitted yet</span>}
      </h3>
      {props.types.map((type) => (
        <label class="check" key={type.event_type}>
          <input
            type="checkbox"
            checked={props.selected.includes(type.event_type)}
            onChange={(e) => props.onToggle(type.event_type, e.currentTarget.checked)}
          />
          <span>
            <code>{type.event_type}</code>
            <span class="help">{type.description}</span>
          </span>
        </label>
      ))}
    </div>
  );
}

function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p id={id} class="field-error">
      {message}
    </p>
  );
}
