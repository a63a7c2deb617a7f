// A webhook-operator receiver with express (4 or 5).
//   WEBHOOK_SECRET=<the webhook's secret> PORT=9000 node express.mjs
import express from "express";
import { verifyWebhook, WebhookVerificationError } from "webhook-operator/verify";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error("set WEBHOOK_SECRET to the webhook's secret");
// Envelope ids already handled. In production: a unique key in your database, written in the same
// transaction as the work the event causes.
const seenIds = new Set();

const app = express();
// express.raw, not express.json, on this route: the signature covers the body's exact bytes.
app.post("/hooks", express.raw({ type: "application/json", limit: "1mb" }), (req, res) => {
  let event;
  try {
    event = verifyWebhook({ secret, body: req.body ?? "", headers: req.headers });
  } catch (error) {
    const reason = error instanceof WebhookVerificationError ? error.reason : "unverified";
    res.status(400).type("text").send(reason);
    return;
  }
  if (seenIds.has(event.id)) {
    res.send("duplicate");
    return;
  }
  seenIds.add(event.id);
  console.log("received", event.event_type, event.id);
  res.send("ok");
});

const server = app.listen(Number(process.env.PORT ?? 9000), () => {
  console.log("listening on port", server.address().port);
});
