import type { Webhook } from "../api-types";
import { Badge } from "../components/badges";
import { exactTime } from "../format";

// A webhook's pace (docs/deliveries.md, "Pace") on its page: throttled is not failing, so it gets a
// badge of its own and its rate limit is shown with the delivery policy.

/** Shown while the receiver's Retry-After pauses the webhook's sends. */
export function ThrottledBadge({ webhook }: { webhook: Webhook }) {
  if (webhook.throttled_until === null) return null;
  return (
    <Badge tone="warn">
      <span title="The receiver asked for a pause (429 or 503 with Retry-After); deliveries wait, they do not fail">
        Throttled until {exactTime(webhook.throttled_until)}
      </span>
    </Badge>
  );
}

export const rateLimitText = (webhook: Webhook): string =>
  webhook.rate_limit
    ? `${webhook.rate_limit.per_second} a second, bursts of ${webhook.rate_limit.burst}, across all replicas`
    : "Off: as fast as the service sends";
