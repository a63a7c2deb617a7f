import { z } from "../http/openapi.js";
import { filterLimits } from "./filter-rules.js";
import { previewBody } from "./preview-schemas.js";

// The filter check's request and answer (filter-check-routes.ts), apart from the route so the
// dashboard's types can be derived from them without reaching the engine.

const maxWorkloadLabels = 64;

const workload = z
  .strictObject(
    {
      kind: z
        .string({ error: "workload.kind must be a string" })
        .max(63, "workload.kind must be at most 63 characters")
        .optional()
        .openapi({ description: "Deployment, StatefulSet or DaemonSet; left out: the event names none" }),
      labels: z
        .record(
          z.string().max(317, "a workload label key must be at most 317 characters"),
          z
            .string({ error: "each workload label value must be a string" })
            .max(
              filterLimits.labelNameLength,
              `a workload label value must be at most ${filterLimits.labelNameLength} characters`,
            ),
          { error: 'workload.labels must be an object {"label": "value"}' },
        )
        .refine((labels) => Object.keys(labels).length <= maxWorkloadLabels, {
          error: `workload.labels must have at most ${maxWorkloadLabels} labels`,
        })
        .optional()
        .openapi({ description: "The workload's labels; left out: the event names none" }),
      environment: z
        .string({ error: "workload.environment must be a string" })
        .max(
          filterLimits.environmentLength,
          `workload.environment must be at most ${filterLimits.environmentLength} characters`,
        )
        .optional()
        .openapi({ description: "The rollout's environment (the payload's environment); left out: none" }),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? undefined
          : "workload must be an object {kind, labels, environment}",
    },
  )
  .openapi("ExampleWorkload");

// The workload is optional rather than defaulted to {}: generators turn an object default into code
// that does not compile (openapi-generator's Go client: `var workload ExampleWorkload = {}`).
export const filterCheckBody = z
  .strictObject({ event_type: previewBody.shape.event_type, workload: workload.optional() })
  .openapi("FilterCheckRequest");

export const filterCheckSchema = z
  .object({
    event_type: z.string(),
    would_deliver: z.boolean(),
    reasons: z.array(z.string()).openapi({
      description:
        "Why it would not (disabled, not subscribed, each filter that leaves it out); empty when it would",
    }),
  })
  .openapi("FilterCheck");
