import type { RenderedBody } from "./types.js";

// What the main thread asks of a template thread, and what it answers (template-pool.ts).

export type TemplateTask =
  | { kind: "check"; template: string }
  | {
      kind: "render";
      template: string;
      /** The event's envelope, as stored. */
      envelope: { payload?: unknown } & Record<string, unknown>;
      /** The event's rollout details (rollout-details.ts), the template's `rollout`; null for none. */
      rollout: object | null;
      contentType: string | null;
    };

export type TemplateAnswer =
  | { ok: true; rendered?: RenderedBody }
  | { ok: false; kind: "syntax" | "render"; message: string; line: number | null };
