// Every event name a webhook may subscribe to (docs/api.md, "Event types"). Only the deployment.* events are emitted in
// this release; the others are accepted in subscriptions and never fire.
export const eventTypes = [
  {
    event_type: "deployment.created",
    category: "Deployment",
    description: "A new deployment (rollout) is initiated.",
    emitted: true,
  },
  {
    event_type: "deployment.ready",
    category: "Deployment",
    description: "A deployment is ready to receive traffic.",
    emitted: true,
  },
  {
    event_type: "deployment.succeeded",
    category: "Deployment",
    description: "A deployment completes successfully.",
    emitted: true,
  },
  {
    event_type: "deployment.failed",
    category: "Deployment",
    description: "A deployment fails.",
    emitted: true,
  },
  {
    event_type: "deployment.cancelled",
    category: "Deployment",
    description: "A deployment is cancelled before it finished (superseded or deleted).",
    emitted: true,
  },
  {
    event_type: "project.created",
    category: "Project",
    description: "A project is created. Not emitted in the current release.",
    emitted: false,
  },
  {
    event_type: "project.deleted",
    category: "Project",
    description: "A project is deleted. Not emitted in the current release.",
    emitted: false,
  },
  {
    event_type: "domain.created",
    category: "Domain",
    description: "A custom domain is added. Not emitted in the current release.",
    emitted: false,
  },
  {
    event_type: "domain.provisioned",
    category: "Domain",
    description: "A certificate is issued for a custom domain. Not emitted in the current release.",
    emitted: false,
  },
  {
    event_type: "email.delivered",
    category: "Email",
    description: "A transactional email is delivered. Not emitted in the current release.",
    emitted: false,
  },
  {
    event_type: "email.bounced",
    category: "Email",
    description: "A transactional email bounced. Not emitted in the current release.",
    emitted: false,
  },
  {
    event_type: "email.complained",
    category: "Email",
    description: "A recipient marked a transactional email as spam. Not emitted in the current release.",
    emitted: false,
  },
] as const;

export type EventType = (typeof eventTypes)[number]["event_type"];

export const eventTypeNames = eventTypes.map((type) => type.event_type) as [EventType, ...EventType[]];

export type DeploymentEventType = Extract<EventType, `deployment.${string}`>;
