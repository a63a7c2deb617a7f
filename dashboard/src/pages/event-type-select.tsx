import { emittedEventTypes } from "./event-summary";

/** "Event type": one of the emitted deployment.* types, or all of them (""). */
export function EventTypeSelect({
  value,
  onChange,
}: {
  value: string;
  onChange: (eventType: string) => void;
}) {
  return (
    <label>
      <span>Event type</span>
      <select value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">All event types</option>
        {emittedEventTypes.map((type) => (
          <option key={type} value={type}>
            {type}
          </option>
        ))}
      </select>
    </label>
  );
}
