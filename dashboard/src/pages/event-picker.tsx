import type { EventType } from "../api-types";
import { FieldError, Loading } from "../components/errors";
import { isEmitted } from "./event-summary";

/** The event catalogue by category, names not emitted yet marked, with an "All events" choice. */
export function EventPicker(props: {
  catalogue: EventType[] | undefined;
  selected: string[];
  onChange: (events: string[]) => void;
  problem: string | undefined;
}) {
  const types = props.catalogue ?? [];
  const all = types.length > 0 && types.every((t) => props.selected.includes(t.event_type));
  const categories = [...new Set(types.map((t) => t.category))];
  const toggle = (name: string, on: boolean) =>
    props.onChange(on ? [...props.selected, name] : props.selected.filter((event) => event !== name));
  return (
    <fieldset class="field" aria-describedby={props.problem ? "events-error" : undefined}>
      <legend>Events</legend>
      {!props.catalogue && <Loading what="event types" />}
      {types.length > 0 && (
        <label class="check check-all">
          <input
            type="checkbox"
            checked={all}
            onChange={(e) => props.onChange(e.currentTarget.checked ? types.map((t) => t.event_type) : [])}
          />
          <span>
            <strong>All events</strong>
            <span class="help">Every event type, including those not emitted yet.</span>
          </span>
        </label>
      )}
      {categories.map((category) => (
        <div class="event-group" key={category}>
          {/* h2: the page's h1 is the form's title; the field groups above are legends, not headings. */}
          <h2>
            {category}
            {!isEmitted(category) && <span class="badge badge-muted">not emitted yet</span>}
          </h2>
          {types
            .filter((t) => t.category === category)
            .map((type) => (
              <label class="check" key={type.event_type}>
                <input
                  type="checkbox"
                  checked={props.selected.includes(type.event_type)}
                  onChange={(e) => toggle(type.event_type, e.currentTarget.checked)}
                />
                <span>
                  <code>{type.event_type}</code>
                  <span class="help">{type.description}</span>
                </span>
              </label>
            ))}
        </div>
      ))}
      <FieldError id="events-error" message={props.problem} />
    </fieldset>
  );
}
