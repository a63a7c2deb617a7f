/** A small set of mutually exclusive views (24 hours / 30 days, Pretty / Raw) as pressed buttons. */
export function Segmented<T extends string>(props: {
  label: string;
  options: readonly { value: T; label: string }[];
  value: T;
  onChange: (value: T) => void;
}) {
  return (
    <fieldset class="segmented">
      <legend class="visually-hidden">{props.label}</legend>
      {props.options.map((option) => (
        <button
          key={option.value}
          type="button"
          class="button button-small"
          aria-pressed={props.value === option.value}
          onClick={() => props.onChange(option.value)}
        >
          {option.label}
        </button>
      ))}
    </fieldset>
  );
}
