"""A webhook-operator receiver with Python's standard library only.

    WEBHOOK_SECRET=<the webhook's secret> PORT=9000 python3 receiver.py
"""
import hashlib
import hmac
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 300
SIGNATURE = re.compile(r"sha256=([0-9a-fA-F]{64})")
TIMESTAMP = re.compile(r"[0-9]{1,12}")


class VerificationError(Exception):
    def __init__(self, reason, message):
        super().__init__(f"Webhook verification failed: {message}.")
        self.reason = reason


def verify_webhook(secret: bytes, body: bytes, headers, tolerance=TOLERANCE_SECONDS) -> dict:
    """Checks a delivery's signature and the age of its timestamp; returns the envelope.

    body: the raw request body. headers: a case-insensitive mapping (http.server's,
    Flask's or Django's request.headers).
    """
    timestamp = headers.get("X-Webhook-Timestamp")
    signature = headers.get("X-Webhook-Signature")
    if timestamp is None:
        raise VerificationError("missing_timestamp", "the X-Webhook-Timestamp header is missing")
    if signature is None:
        raise VerificationError("missing_signature", "the X-Webhook-Signature header is missing")
    if not TIMESTAMP.fullmatch(timestamp):
        raise VerificationError("malformed_timestamp", "X-Webhook-Timestamp is not Unix seconds")
    match = SIGNATURE.fullmatch(signature)
    if match is None:
        raise VerificationError("malformed_signature", "X-Webhook-Signature is not sha256=<hex>")
    signed = timestamp.encode() + b"." + body
    expected = hmac.new(secret, signed, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, match.group(1).lower()):
        raise VerificationError("bad_signature", "the signature does not match")
    age = time.time() - int(timestamp)
    if age > tolerance:
        raise VerificationError("timestamp_too_old", f"the delivery was signed {age:.0f} s ago")
    if -age > tolerance:
        raise VerificationError("timestamp_in_future", f"the timestamp is {-age:.0f} s ahead")
    try:
        envelope = json.loads(body)
    except ValueError:
        raise VerificationError("invalid_json", "the body is not JSON") from None
    if not (
        isinstance(envelope, dict)
        and isinstance(envelope.get("id"), str)
        and isinstance(envelope.get("event_type"), str)
        and isinstance(envelope.get("payload"), dict)
    ):
        raise VerificationError("invalid_envelope", "the body is not an event envelope")
    return envelope


SECRET = os.environ["WEBHOOK_SECRET"].encode()
# Envelope ids already handled. In production: a unique key in your database, written in the
# same transaction as the work the event causes.
seen_ids = set()
seen_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            event = verify_webhook(SECRET, body, self.headers)
        except VerificationError as error:
            return self.answer(400, error.reason)
        with seen_lock:
            duplicate = event["id"] in seen_ids
            seen_ids.add(event["id"])
        if duplicate:
            return self.answer(200, "duplicate")
        print("received", event["event_type"], event["id"], flush=True)
        self.answer(200, "ok")

    def answer(self, status, text):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass  # one line per event above is enough


server = ThreadingHTTPServer(("", int(os.environ.get("PORT", "9000"))), Handler)
print("listening on port", server.server_address[1], flush=True)
server.serve_forever()
