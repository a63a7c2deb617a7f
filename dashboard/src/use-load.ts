import { useCallback, useEffect, useState } from "preact/hooks";
import { useLocation } from "wouter-preact";
import { ApiFailure } from "./api";
import { session } from "./session";

export interface Loaded<T> {
  data: T | undefined;
  error: ApiFailure | undefined;
  reload: () => void;
  /** Replace the data after a write answered with the new state. */
  set: (data: T) => void;
}

/** Loads once per change of deps. A 401 (key revoked meanwhile) signs out and goes to the sign-in page. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<ApiFailure>();
  const [generation, setGeneration] = useState(0);
  const onUnauthorized = useUnauthorizedRedirect();
  useEffect(() => {
    let current = true;
    setError(undefined);
    load().then(
      (value) => current && setData(value),
      (failure: unknown) => {
        if (!current) return;
        if (failure instanceof ApiFailure && failure.status === 401) return onUnauthorized();
        setError(failure instanceof ApiFailure ? failure : new ApiFailure(0, "client", String(failure)));
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { data, error, reload, set: setData };
}

export function useUnauthorizedRedirect(): () => void {
  const [, navigate] = useLocation();
  return () => {
    session.signOut();
    navigate("/sign-in?expired=1", { replace: true });
  };
}
