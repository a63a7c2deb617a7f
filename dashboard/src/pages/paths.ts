// Every address of the dashboard, in one place (the server answers all of them with the page).
export const paths = {
  projects: "/projects",
  webhooks: (p: number) => `/projects/${p}/settings/webhooks`,
  newWebhook: (p: number) => `/projects/${p}/settings/webhooks/new`,
  webhook: (p: number, w: number) => `/projects/${p}/settings/webhooks/${w}`,
  editWebhook: (p: number, w: number) => `/projects/${p}/settings/webhooks/${w}/edit`,
  delivery: (p: number, w: number, d: number) => `/projects/${p}/settings/webhooks/${w}/deliveries/${d}`,
};
