import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { LRUCache } from "lru-cache";
import { abortable } from "../abortable.js";
import {
  type DestinationPolicy,
  nameRefusalReason,
  refusalReason,
} from "../delivery-engine/destination-policy.js";

// The destination policy judged when a webhook's URL is written, through the API (403) or by a Webhook
// resource (Ready=False, reason DestinationRefused). Deliveries judge every connection again after DNS
// (destination-policy.ts): these checks only say early what would fail later.

/** The URL's host as an address, brackets of an IPv6 literal removed. */
const hostOf = (url: string) => new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");

/**
 * Why the policy refuses the URL's host when it is an IP address, or a name that may not even be looked
 * up (DELIVERY_ALLOWED_DESTINATIONS_ONLY); null when allowed or a name to judge at connection.
 */
export function literalDestinationRefusal(url: string, policy: DestinationPolicy): string | null {
  const host = hostOf(url);
  return isIP(host) === 0 ? nameRefusalReason(host, policy) : refusalReason(host, policy);
}

/**
 * Answers of the last 30 s per policy and host name: a thousand Webhook resources of one receiver host
 * cost one lookup, not a thousand. Each lookup holds one of libuv's four threads while it waits, and a
 * resolver that drops queries sent together (measured here: 40 at once, some answered after 5 s) made
 * every reconcile wait for the timeout (bench/operator.ts: 1,000 resources Ready in 196 s, not 14 s).
 */
const recentAnswers = new WeakMap<DestinationPolicy, LRUCache<string, Promise<string | null>>>();
const answerTtlMs = 30_000;
const maxHostsKept = 1_000;

/**
 * Why the policy refuses the URL's host, a name judged by the addresses it resolves to now (it may
 * resolve elsewhere later). Null when allowed, and when the name does not resolve within `timeoutMs`
 * (deliveries will say why they fail).
 */
export async function destinationRefusal(
  url: string,
  policy: DestinationPolicy,
  timeoutMs = 2_000,
): Promise<string | null> {
  const host = hostOf(url);
  if (isIP(host) !== 0) return refusalReason(host, policy);
  const unlisted = nameRefusalReason(host, policy);
  if (unlisted) return unlisted;
  let answers = recentAnswers.get(policy);
  if (!answers) {
    answers = new LRUCache({ max: maxHostsKept, ttl: answerTtlMs });
    recentAnswers.set(policy, answers);
  }
  const recent = answers.get(host);
  if (recent) return recent;
  const answer = refusalOfAddresses(host, policy, timeoutMs);
  answers.set(host, answer);
  return answer;
}

async function refusalOfAddresses(
  host: string,
  policy: DestinationPolicy,
  timeoutMs: number,
): Promise<string | null> {
  // A name that does not resolve in time is checked again when a delivery dials it.
  const addresses = await abortable(lookup(host, { all: true }), AbortSignal.timeout(timeoutMs)).catch(
    () => [],
  );
  for (const { address } of addresses) {
    const reason = refusalReason(address, policy, host);
    if (reason !== null) return `${host} resolves to ${reason}`;
  }
  return null;
}
