// A webhook-operator receiver with Node's own http module.
//   WEBHOOK_SECRET=<the webhook's secret> PORT=9000 node http.mjs
import { createServer } from "node:http";
import { verifyWebhook, WebhookVerificationError } from "webhook-operator/verify";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error("set WEBHOOK_SECRET to the webhook's secret");
// Envelope ids already handled. In production: a unique key in your database, written in the same
// transaction as the work the event causes.
const seenIds = new Set();

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let event;
  try {
    // The body exactly as received: bytes, not parsed JSON.
    event = verifyWebhook({ secret, body: Buffer.concat(chunks), headers: req.headers });
  } catch (error) {
    const reason = error instanceof WebhookVerificationError ? error.reason : "unverified";
    res.writeHead(400, { "content-type": "text/plain" }).end(reason);
    return;
  }
  if (seenIds.has(event.id)) {
    res.end("duplicate");
    return;
  }
  seenIds.add(event.id);
  console.log("received", event.event_type, event.id);
  res.end("ok");
});

server.listen(Number(process.env.PORT ?? 9000), () => {
  console.log("listening on port", server.address().port);
});
