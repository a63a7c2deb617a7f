import { describe, expect, it } from "vitest";
import {
  connectionFailedMessage,
  destinationRefusedMessage,
  httpErrorMessage,
  timeoutMessage,
} from "../../src/delivery-engine/sender.js";
import { notRenderedMessage } from "../../src/delivery-engine/shaped-send.js";
import { notSentDisabledMessage } from "../../src/delivery-engine/worker-outcomes.js";
import { attemptReason } from "../../src/operator/controllers/attempt-reason.js";

// A Webhook's status says how an attempt ended in a fixed phrase, built from the recorded outcome: the
// recorded messages name the webhook's URL, which may hold a token, and the status is readable by anyone
// who may `get` the Webhook. Each row is a message the engine itself writes, with such a URL.

const url = "https://hooks.example/services/T0KEN-s3cr3t?key=k3y";

describe("attemptReason", () => {
  it.each([
    ["an answer", 200, null, "HTTP 200 OK"],
    ["an HTTP error", 503, httpErrorMessage(url, 503), "HTTP 503 Service Unavailable"],
    ["an unusual status", 599, httpErrorMessage(url, 599), "HTTP 599"],
    ["a timeout", 0, timeoutMessage(url, 30_000), "Timed out"],
    ["a connection failure", 0, connectionFailedMessage(url), "Connection failed"],
    ["a refused destination", 0, destinationRefusedMessage(url, "a private address"), "Destination refused"],
    [
      "a body that could not be rendered",
      0,
      notRenderedMessage("template", new Error(`no such variable in ${url}`)),
      "Not sent: the body could not be rendered",
    ],
    ["a webhook disabled after queueing", 0, notSentDisabledMessage(7), "Not sent: the webhook was disabled"],
    [
      "a secret that cannot be opened",
      0,
      "Not sent: the webhook secret cannot be decrypted; bad key.",
      "Not sent",
    ],
    ["anything else", 0, `boom at ${url}`, "Failed without an HTTP response"],
  ])("names %s without quoting the message", (_what, statusCode, errorMessage, reason) => {
    const phrase = attemptReason({ status_code: statusCode, error_message: errorMessage });
    expect(phrase).toBe(reason);
    expect(phrase).not.toMatch(/s3cr3t|hooks\.example/);
  });
});
