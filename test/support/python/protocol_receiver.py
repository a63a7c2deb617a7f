"""A receiver written with the official Python libraries: the CloudEvents SDK reads /cloudevents, the
Standard Webhooks library verifies /standard-webhooks. It answers each delivery with its verdict as JSON
(the delivery record keeps it as response_body), 200 when the library accepted the request, 400 if not.
Listens on loopback, on the port it prints; the Standard Webhooks secret comes from WEBHOOK_SECRET."""

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cloudevents.core.bindings.http import HTTPMessage, from_http_event
from standardwebhooks.webhooks import Webhook

SECRET = os.environ["WEBHOOK_SECRET"]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {name: value for name, value in self.headers.items()}
        try:
            if self.path == "/cloudevents":
                event = from_http_event(HTTPMessage(headers, body))
                verdict = {
                    "id": event.get_id(),
                    "type": event.get_type(),
                    "source": event.get_source(),
                    "subject": event.get_subject(),
                    "specversion": event.get_specversion(),
                    "data": event.get_data(),
                }
            elif self.path == "/standard-webhooks":
                verdict = {"verified": Webhook(SECRET).verify(body, headers)}
            else:
                raise ValueError("unknown path")
            status = 200
        except Exception as error:  # the verdict is the library's refusal
            verdict = {"error": f"{type(error).__name__}: {error}"}
            status = 400
        answer = json.dumps(verdict, default=str).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "0"))), Handler)
print(f"listening on port {server.server_address[1]}", flush=True)
server.serve_forever()
