"""The client suite's workflow (scripts/clients/run.sh) with the client openapi-python-client generates."""

import os
import re
from urllib.parse import parse_qs, urlsplit

from webhook_operator_client import AuthenticatedClient
from webhook_operator_client.api.deliveries import get_delivery, list_deliveries, retry_delivery
from webhook_operator_client.api.projects import create_project, list_projects
from webhook_operator_client.api.webhooks import (
    create_webhook,
    get_webhook,
    list_webhooks,
    send_test_event,
    update_webhook,
)
from webhook_operator_client.models import (
    CreateProject,
    CreateWebhook,
    CreateWebhookEventsItem,
    CreateWebhookFormat,
    ErrorResponse,
    TestEventRequest,
    TestEventRequestEventType,
    UpdateWebhook,
    WebhookPage,
)
from webhook_operator_client.types import Unset

client = AuthenticatedClient(base_url=os.environ["WO_BASE_URL"], token=os.environ["WO_API_KEY"])
steps = 0


def step(name, ok, got=None):
    global steps
    if not ok:
        raise SystemExit(f"step {steps + 1} ({name}) failed: got {got!r}")
    steps += 1
    print(f"ok {steps} {name}")


def next_cursor(headers):
    """The cursor of the Link header's rel="next" address, or None on the last page."""
    match = re.match(r'<([^>]*)>;\s*rel="next"', headers.get("link", ""))
    return parse_qs(urlsplit(match.group(1)).query)["cursor"][0] if match else None


slug = os.environ["WO_CLIENT"]
project = create_project.sync(client=client, body=CreateProject(name=slug, slug=slug))
step("create a project", project.slug == slug, project)

listed, page = [], 1
while True:
    projects = list_projects.sync(client=client, page=page, per_page=2)
    listed += projects.projects
    if not projects.projects or len(listed) >= projects.total:
        break
    page += 1
step("list projects page by page (per_page)", project.id in [p.id for p in listed], listed)

events = [CreateWebhookEventsItem.DEPLOYMENT_SUCCEEDED, CreateWebhookEventsItem.DEPLOYMENT_FAILED]
webhook = create_webhook.sync(
    project.id, client=client, body=CreateWebhook(url=os.environ["WO_RECEIVER_URL"], events=events, secret="s3cret")
)
step("create a webhook", webhook.enabled is True and webhook.has_secret is True, webhook)

bare = list_webhooks.sync(project.id, client=client)
paged = list_webhooks.sync(project.id, client=client, page=1, page_size=1)
step(
    "list webhooks, bare and paged (page_size)",
    [w.id for w in bare] == [webhook.id] and isinstance(paged, WebhookPage) and paged.total == 1,
    (bare, paged),
)

got = get_webhook.sync(project.id, webhook.id, client=client)
step("get the webhook", got.id == webhook.id and got.url == os.environ["WO_RECEIVER_URL"], got)

disabled = update_webhook.sync(project.id, webhook.id, client=client, body=UpdateWebhook(enabled=False))
step("disable it", disabled.enabled is False and disabled.events == webhook.events, disabled)
enabled = update_webhook.sync(project.id, webhook.id, client=client, body=UpdateWebhook(enabled=True))
step("enable it", enabled.enabled is True, enabled)

sent = send_test_event.sync(project.id, webhook.id, client=client)
step("a test event with no body", sent.success is True and sent.error_message is None, sent)
failed = send_test_event.sync(
    project.id, webhook.id, client=client, body=TestEventRequest(event_type=TestEventRequestEventType.DEPLOYMENT_FAILED)
)
step("a test event the receiver fails", failed.success is False and failed.status_code == 500, failed)
send_test_event.sync(project.id, webhook.id, client=client)

ids, cursor = [], None
while True:
    answer = list_deliveries.sync_detailed(
        project.id, webhook.id, client=client, limit=1, **({"cursor": cursor} if cursor else {})
    )
    ids += [d.id for d in answer.parsed]
    cursor = next_cursor(answer.headers)
    if cursor is None:
        break
step("page through the deliveries with the Link header's cursor", len(ids) == 3 and ids == sorted(ids, reverse=True), ids)

delivery = get_delivery.sync(project.id, webhook.id, failed.delivery_id, client=client)
step("get one delivery", delivery.event_type == "deployment.failed" and delivery.success is False, delivery)

replayed = retry_delivery.sync(project.id, webhook.id, failed.delivery_id, client=client)
step("replay it", replayed.delivery_id > failed.delivery_id and replayed.error_message is not None, replayed)

bad = create_webhook.sync_detailed(
    project.id,
    client=client,
    body=CreateWebhook(url=os.environ["WO_RECEIVER_URL"], events=events, format_=CreateWebhookFormat.TEMPLATE, template="{% if %}"),
)
step(
    "a 400 with the field's path",
    bad.status_code == 400
    and isinstance(bad.parsed, ErrorResponse)
    and not isinstance(bad.parsed.error.details, Unset)
    and bad.parsed.error.details[0].path == "body.template",
    (bad.status_code, bad.content),
)

missing = get_webhook.sync_detailed(project.id, 999999, client=client)
step(
    "a 404",
    missing.status_code == 404 and isinstance(missing.parsed, ErrorResponse) and missing.parsed.error.code == "not_found",
    (missing.status_code, missing.content),
)
print(f"{steps}/{steps} steps passed")
