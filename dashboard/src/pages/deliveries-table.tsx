import { useEffect, useRef, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { type ApiFailure, api } from "../api";
import type { Delivery } from "../api-types";
import { Outcome, When } from "../components/badges";
import { ErrorBox, Loading } from "../components/errors";
import { useServiceInfo } from "../service-info";
import { EventTypeSelect } from "./event-type-select";
import { paths } from "./paths";

/** Newest first, filtered by outcome and event type; "Load older" follows the Link header without limit. */
export function DeliveriesTable({
  projectId,
  webhookId,
  version,
}: {
  projectId: number;
  webhookId: number;
  version: number;
}) {
  const [outcome, setOutcome] = useState<"all" | "failed" | "succeeded">("all");
  const [eventType, setEventType] = useState("");
  const [rows, setRows] = useState<Delivery[]>();
  const [next, setNext] = useState<string>();
  const [error, setError] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);
  const kubernetes = useServiceInfo()?.kubernetes;
  const filter = {
    ...(outcome === "all" ? {} : { success: outcome === "succeeded" }),
    ...(eventType ? { eventType } : {}),
  };
  // Each load is numbered; an answer that arrives after a newer load began (the filter changed while
  // the unfiltered page was on its way) is dropped instead of replacing the newer rows.
  const latest = useRef(0);
  const load = async (address?: string) => {
    const ticket = ++latest.current;
    setBusy(true);
    setError(undefined);
    try {
      const page = await api.deliveries(projectId, webhookId, filter, address);
      if (ticket !== latest.current) return;
      setRows((current) => (address ? [...(current ?? []), ...page.deliveries] : page.deliveries));
      setNext(page.next);
    } catch (failure) {
      if (ticket === latest.current) setError(failure as ApiFailure);
    } finally {
      if (ticket === latest.current) setBusy(false);
    }
  };
  // Reloads when the filters or the webhook's history (version) change.
  useEffect(() => {
    void load();
  }, [projectId, webhookId, outcome, eventType, version]);

  return (
    <section class="card table-card" aria-labelledby="deliveries-title">
      <div class="card-head">
        <h2 id="deliveries-title">Recent deliveries</h2>
        <div class="filters">
          <label>
            <span>Outcome</span>
            <select value={outcome} onChange={(e) => setOutcome(e.currentTarget.value as typeof outcome)}>
              <option value="all">All</option>
              <option value="failed">Failed</option>
              <option value="succeeded">Succeeded</option>
            </select>
          </label>
          <EventTypeSelect value={eventType} onChange={setEventType} />
        </div>
      </div>
      <ErrorBox error={error} />
      {!rows && !error && <Loading what="deliveries" />}
      {rows?.length === 0 && (
        <div class="empty">
          <p class="muted">
            {outcome === "all" && !eventType
              ? kubernetes
                ? "No deliveries yet. Send a test event, or roll out a Deployment in this namespace."
                : "No deliveries yet. Send a test event to check the receiver."
              : "No deliveries match these filters."}
          </p>
        </div>
      )}
      {rows && rows.length > 0 && (
        <table class="table table-deliveries">
          <thead>
            <tr>
              <th scope="col">Outcome</th>
              <th scope="col">Event</th>
              <th scope="col">Event id</th>
              <th scope="col" class="num">
                Attempt
              </th>
              <th scope="col">Time</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id} data-delivery-id={d.id}>
                <td data-label="Outcome">
                  <Link
                    href={paths.delivery(projectId, webhookId, d.id)}
                    class="row-link"
                    aria-label={`Delivery ${d.id}`}
                  >
                    <Outcome success={d.success} statusCode={d.status_code} />
                  </Link>
                </td>
                <td data-label="Event">
                  <code>{d.event_type}</code>
                </td>
                <td data-label="Event id" class="mono small event-id">
                  {d.event_id}
                </td>
                <td data-label="Attempt" class="num">
                  {d.attempt_number}
                </td>
                <td data-label="Time">
                  <When iso={d.delivered_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {rows && (
        <div class="pager">
          <span class="muted small">{rows.length} shown</span>
          {next && (
            <button type="button" class="button" disabled={busy} aria-busy={busy} onClick={() => load(next)}>
              Load older deliveries
            </button>
          )}
        </div>
      )}
    </section>
  );
}
