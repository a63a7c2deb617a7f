import type { Webhook } from "../api-types";
import { FieldError } from "../components/errors";

// A chat service's incoming-webhook URL holds its token in the path: "Keep the URL secret" sends
// url_secret, after which no answer shows more than scheme://host/******** (docs/formats.md, "A chat
// URL is a secret through the API too"). Sent only when changed, so a form saved without touching it
// sends the body it always did. The masked URL the form shows is sent back as it was, which the API
// takes as "unchanged"; switching the masking off needs a new URL, which the API's 409 says.

/** `{url_secret}` when the box differs from the saved webhook (unset on a new one: false). */
export function urlSecretBody(secret: boolean, webhook: Webhook | undefined) {
  return secret === (webhook?.url_secret ?? false) ? {} : { url_secret: secret };
}

export function UrlSecretField(props: {
  checked: boolean;
  onChange: (checked: boolean) => void;
  saved: boolean;
  problem: string | undefined;
}) {
  const { checked, onChange, saved, problem } = props;
  return (
    <div class="field">
      <label class="check">
        <input
          type="checkbox"
          checked={checked}
          onChange={(e) => onChange(e.currentTarget.checked)}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? "url_secret-error" : undefined}
        />
        <span>
          <strong>Keep the URL secret</strong>
          <span class="help">
            {saved
              ? "The URL is shown only as its scheme and host. To show it again, enter a new URL."
              : "For a Slack, Teams, Discord or Google Chat URL, whose path is its credential: once saved, the URL is shown only as its scheme and host, here, in lists and in delivery errors."}
          </span>
        </span>
      </label>
      <FieldError id="url_secret-error" message={problem} />
    </div>
  );
}
