import { useState } from "preact/hooks";
import { FieldError } from "../components/errors";
import { generateSecret } from "../format";

export type SecretAction = "keep" | "replace" | "remove";

const actionLabel = (action: SecretAction, hasSecret: boolean) =>
  action === "keep"
    ? "Keep it as it is"
    : action === "remove"
      ? "Remove it (deliveries are sent unsigned)"
      : hasSecret
        ? "Replace it"
        : "Set one";

/**
 * The secret is write-only: a new webhook takes an optional one; an existing webhook shows only
 * whether it has one, and the secret is kept, replaced or removed.
 */
export function SecretField(props: {
  /** undefined for a new webhook. */
  hasSecret: boolean | undefined;
  action: SecretAction;
  onAction: (action: SecretAction) => void;
  secret: string;
  onSecret: (secret: string) => void;
  problem: string | undefined;
}) {
  const [revealed, setRevealed] = useState(false);
  const existing = props.hasSecret !== undefined;
  return (
    <fieldset class="field">
      <legend>Secret</legend>
      <p class="help">
        With a secret every delivery carries <code>X-Webhook-Signature</code>, an HMAC-SHA256 your receiver
        can verify. The secret is never shown again once saved.
      </p>
      {existing && (
        <>
          <p>Currently: {props.hasSecret ? <strong>set</strong> : <strong>not set</strong>}</p>
          <div class="radios">
            {(["keep", "replace", "remove"] as const)
              .filter((action) => action !== "remove" || props.hasSecret)
              .map((action) => (
                <label class="check" key={action}>
                  <input
                    type="radio"
                    name="secret-action"
                    checked={props.action === action}
                    onChange={() => props.onAction(action)}
                  />
                  {actionLabel(action, props.hasSecret === true)}
                </label>
              ))}
          </div>
        </>
      )}
      {props.action === "replace" && (
        <>
          <label for="secret">{existing ? "New secret" : "Secret (optional)"}</label>
          <div class="input-row">
            <input
              id="secret"
              type={revealed ? "text" : "password"}
              autocomplete="new-password"
              spellcheck={false}
              value={props.secret}
              onInput={(e) => props.onSecret(e.currentTarget.value)}
              aria-invalid={props.problem ? true : undefined}
              aria-describedby={props.problem ? "secret-error" : undefined}
            />
            <button type="button" class="button" onClick={() => setRevealed(!revealed)}>
              {revealed ? "Hide" : "Show"}
            </button>
            <button
              type="button"
              class="button"
              onClick={() => {
                props.onSecret(generateSecret());
                setRevealed(true);
              }}
            >
              Generate
            </button>
          </div>
          <FieldError id="secret-error" message={props.problem} />
        </>
      )}
    </fieldset>
  );
}
