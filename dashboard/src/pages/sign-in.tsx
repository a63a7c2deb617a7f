import { useState } from "preact/hooks";
import { useLocation, useSearch } from "wouter-preact";
import { ApiFailure, api } from "../api";
import { session } from "../session";

export function SignInPage() {
  const [, navigate] = useLocation();
  const expired = new URLSearchParams(useSearch()).get("expired") === "1";
  const [key, setKey] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.verifyKey(key.trim());
      session.signIn(key.trim());
      navigate(history.state?.returnTo ?? "/projects", { replace: true });
    } catch (failure) {
      setError(
        failure instanceof ApiFailure && failure.status === 401
          ? "That API key is not valid. Check it for typos, or ask an administrator for a new one."
          : failure instanceof Error
            ? failure.message
            : String(failure),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="signin">
      <form class="card signin-card" onSubmit={submit} noValidate>
        <div class="brand brand-large">
          <img src="/favicon.svg" alt="" width={32} height={32} />
          webhook-operator
        </div>
        <h1>Sign in</h1>
        <p class="muted">
          Use an API key of this service. It is kept in this browser tab only and forgotten when you sign out
          or close the tab.
        </p>
        {expired && !error && (
          <div class="alert alert-info" role="status">
            Your session ended: the API key was not accepted any more. Sign in again.
          </div>
        )}
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? "api-key-error" : undefined}
          required
        />
        {error && (
          <p id="api-key-error" class="field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="button button-primary" disabled={busy || key.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
