// The API key lives in sessionStorage only: gone when the tab closes, never in a URL, a cookie or
// localStorage, never sent anywhere but this origin's /api.
const storageKey = "webhook-operator.api-key";

export const session = {
  key: (): string | null => sessionStorage.getItem(storageKey),
  signIn: (key: string) => sessionStorage.setItem(storageKey, key),
  signOut: () => sessionStorage.removeItem(storageKey),
};
