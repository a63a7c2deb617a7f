import type { ComponentChildren } from "preact";
import { ago, exactTime } from "../format";

export function Badge({
  tone,
  children,
}: {
  tone: "ok" | "bad" | "muted" | "info" | "warn";
  children: ComponentChildren;
}) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}

export function Outcome({ success, statusCode }: { success: boolean; statusCode: number }) {
  return (
    <Badge tone={success ? "ok" : "bad"}>
      {success ? "Succeeded" : "Failed"}
      {statusCode > 0 ? ` · ${statusCode}` : " · no response"}
    </Badge>
  );
}

export function When({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} title={exactTime(iso)}>
      {ago(iso)}
    </time>
  );
}
