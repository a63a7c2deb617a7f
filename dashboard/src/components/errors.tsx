import type { ApiFailure } from "../api";

export function ErrorBox({ error, title }: { error: ApiFailure | undefined; title?: string }) {
  if (!error) return null;
  return (
    <div class="alert alert-error" role="alert">
      <strong>{title ?? (error.status === 404 ? "Not found" : "Something went wrong")}</strong>
      <p>{error.message}</p>
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** A field's problem, referenced by the field's aria-describedby. */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p id={id} class="field-error">
      {message}
    </p>
  );
}
