import { useState } from "preact/hooks";
import { type ApiFailure, api } from "../api";
import type { FilterCheck } from "../api-types";
import { ErrorBox } from "../components/errors";
import { emittedEventTypes } from "./event-summary";

// Trying the webhook's filters without a cluster (docs/api.md, "Checking filters"): an example workload
// and event type in, whether the webhook would get the event and why not out. Sends nothing.

const kinds = ["Deployment", "StatefulSet", "DaemonSet"];

/** `app=payments, tier=web` as labels; undefined when left empty; a term without `=` is a problem. */
function labelsOf(text: string): Record<string, string> | undefined | { problem: string } {
  const terms = text
    .split(",")
    .map((term) => term.trim())
    .filter((term) => term !== "");
  if (terms.length === 0) return undefined;
  const labels: Record<string, string> = {};
  for (const term of terms) {
    const equals = term.indexOf("=");
    if (equals <= 0) return { problem: `"${term}" is not key=value` };
    labels[term.slice(0, equals).trim()] = term.slice(equals + 1).trim();
  }
  return labels;
}

export function FilterCheckCard({ projectId, webhookId }: { projectId: number; webhookId: number }) {
  const [eventType, setEventType] = useState(emittedEventTypes[0] ?? "deployment.created");
  const [kind, setKind] = useState("");
  const [labels, setLabels] = useState("");
  const [environment, setEnvironment] = useState("");
  const [result, setResult] = useState<FilterCheck>();
  const [problem, setProblem] = useState<string>();
  const [error, setError] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);

  const check = async (event: Event) => {
    event.preventDefault();
    setResult(undefined);
    setError(undefined);
    const parsed = labelsOf(labels);
    if (parsed && "problem" in parsed && typeof parsed.problem === "string") {
      setProblem(`Labels: ${parsed.problem}.`);
      return;
    }
    setProblem(undefined);
    setBusy(true);
    try {
      const workload = {
        ...(kind === "" ? {} : { kind }),
        ...(parsed ? { labels: parsed as Record<string, string> } : {}),
        ...(environment.trim() === "" ? {} : { environment: environment.trim() }),
      };
      setResult(await api.checkFilters(projectId, webhookId, { event_type: eventType as never, workload }));
    } catch (failure) {
      setError(failure as ApiFailure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="filter-check-title">
      <h2 id="filter-check-title">Check an event</h2>
      <p class="help">Would this webhook get the event of a workload like this? Nothing is sent.</p>
      <form onSubmit={check}>
        <div class="inline-fields">
          <label>
            Event type{" "}
            <select value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
              {emittedEventTypes.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </label>{" "}
          <label>
            Workload kind{" "}
            <select value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
              <option value="">None</option>
              {kinds.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </label>{" "}
          <label>
            Workload labels{" "}
            <input
              value={labels}
              placeholder="app=payments, tier=web"
              onInput={(e) => setLabels(e.currentTarget.value)}
            />
          </label>{" "}
          <label>
            Environment <input value={environment} onInput={(e) => setEnvironment(e.currentTarget.value)} />
          </label>{" "}
          <button type="submit" class="button" disabled={busy}>
            {busy ? "Checking…" : "Check"}
          </button>
        </div>
      </form>
      <div aria-live="polite">
        {problem && <p class="field-error">{problem}</p>}
        {result &&
          (result.would_deliver ? (
            <p>Would be delivered.</p>
          ) : (
            <>
              <p>Would not be delivered:</p>
              <ul>
                {result.reasons.map((reason) => (
                  <li key={reason}>{reason}</li>
                ))}
              </ul>
            </>
          ))}
      </div>
      <ErrorBox error={error} />
    </section>
  );
}
