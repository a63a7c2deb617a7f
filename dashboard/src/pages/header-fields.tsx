import { FieldError } from "../components/errors";

// Custom request headers (an Authorization, an API key). Their values are write-only like the secret:
// a saved webhook shows only the names, and its headers are kept, replaced as a whole, or removed.

export type HeadersAction = "keep" | "replace" | "remove";
export interface HeaderRow {
  name: string;
  value: string;
}

export interface HeaderValues {
  action: HeadersAction;
  rows: HeaderRow[];
}

export function headerValuesOf(names: string[] | undefined, isNew: boolean): HeaderValues {
  return { action: isNew ? "replace" : "keep", rows: (names ?? []).map((name) => ({ name, value: "" })) };
}

const filled = (rows: HeaderRow[]) => rows.filter((row) => row.name.trim() !== "" || row.value !== "");

/** The body's `headers`: absent to keep them, null to remove them, else the new set. */
export function headersBody(
  values: HeaderValues,
  isNew: boolean,
): { headers?: Record<string, string> | null } {
  if (values.action === "keep") return {};
  if (values.action === "remove") return { headers: null };
  const rows = filled(values.rows);
  if (isNew && rows.length === 0) return {};
  return { headers: Object.fromEntries(rows.map((row) => [row.name.trim(), row.value])) };
}

const actionLabels: Record<HeadersAction, string> = {
  keep: "Keep them as they are",
  replace: "Replace them (enter every value again)",
  remove: "Remove them",
};

export function HeaderFields(props: {
  /** The saved header names; undefined for a new webhook. */
  savedNames: string[] | undefined;
  values: HeaderValues;
  onChange: (values: HeaderValues) => void;
  problem: string | undefined;
}) {
  const { values } = props;
  const saved = props.savedNames;
  const setRow = (index: number, change: Partial<HeaderRow>) =>
    props.onChange({
      ...values,
      rows: values.rows.map((row, i) => (i === index ? { ...row, ...change } : row)),
    });
  return (
    <fieldset class="field">
      <legend>Custom headers</legend>
      <p class="help">
        Sent with every delivery, for a receiver that wants an <code>Authorization</code> or an API key.
        Values are never shown again once saved.
      </p>
      {saved !== undefined && (
        <>
          <p>
            Currently:{" "}
            {saved.length === 0 ? (
              <strong>none</strong>
            ) : (
              saved.map((name, i) => (
                <span key={name}>
                  {i > 0 && ", "}
                  <code>{name}</code> <strong>set</strong>
                </span>
              ))
            )}
          </p>
          {saved.length > 0 && (
            <div class="radios">
              {(["keep", "replace", "remove"] as const).map((action) => (
                <label class="check" key={action}>
                  <input
                    type="radio"
                    name="headers-action"
                    checked={values.action === action}
                    onChange={() => props.onChange({ ...values, action })}
                  />
                  {actionLabels[action]}
                </label>
              ))}
            </div>
          )}
        </>
      )}
      {(values.action === "replace" || (saved !== undefined && saved.length === 0)) && (
        <div class="header-rows">
          {values.rows.map((row, index) => (
            <div class="input-row" key={index}>
              <input
                type="text"
                aria-label={`Header ${index + 1} name`}
                placeholder="Authorization"
                spellcheck={false}
                value={row.name}
                onInput={(e) => setRow(index, { name: e.currentTarget.value })}
              />
              <input
                type="password"
                aria-label={`Header ${index + 1} value`}
                autocomplete="off"
                spellcheck={false}
                value={row.value}
                onInput={(e) => setRow(index, { value: e.currentTarget.value })}
              />
              <button
                type="button"
                class="button"
                aria-label={`Remove header ${index + 1}`}
                onClick={() => props.onChange({ ...values, rows: values.rows.filter((_, i) => i !== index) })}
              >
                Remove
              </button>
            </div>
          ))}
          <div>
            <button
              type="button"
              class="button"
              onClick={() =>
                props.onChange({ action: "replace", rows: [...values.rows, { name: "", value: "" }] })
              }
            >
              Add header
            </button>
          </div>
        </div>
      )}
      <FieldError id="headers-error" message={props.problem} />
    </fieldset>
  );
}
