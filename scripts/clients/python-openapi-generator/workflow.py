"""The client suite's workflow (scripts/clients/run.sh) with the Python client openapi-generator makes."""

import os
import re
from urllib.parse import parse_qs, urlsplit

from wo_client import (
    ApiClient,
    Configuration,
    CreateProject,
    CreateWebhook,
    DeliveriesApi,
    ErrorResponse,
    ProjectsApi,
    TestEventRequest,
    UpdateWebhook,
    WebhookPage,
    WebhooksApi,
)
from wo_client.exceptions import ApiException

api = ApiClient(Configuration(host=os.environ["WO_BASE_URL"], access_token=os.environ["WO_API_KEY"]))
projects_api, webhooks_api, deliveries_api = ProjectsApi(api), WebhooksApi(api), DeliveriesApi(api)
steps = 0


def step(name, ok, got=None):
    global steps
    if not ok:
        raise SystemExit(f"step {steps + 1} ({name}) failed: got {got!r}")
    steps += 1
    print(f"ok {steps} {name}")


def next_cursor(headers):
    """The cursor of the Link header's rel="next" address, or None on the last page."""
    match = re.match(r'<([^>]*)>;\s*rel="next"', (headers or {}).get("Link", ""))
    return parse_qs(urlsplit(match.group(1)).query)["cursor"][0] if match else None


def error_of(call):
    """The status and ErrorResponse of a call that fails."""
    try:
        call()
    except ApiException as error:
        return error.status, ErrorResponse.from_json(error.body)
    raise SystemExit(f"step {steps + 1}: the call did not fail")


slug = os.environ["WO_CLIENT"]
project = projects_api.create_project(CreateProject(name=slug, slug=slug))
step("create a project", project.slug == slug, project)

listed, page = [], 1
while True:
    projects = projects_api.list_projects(page=page, per_page=2)
    listed += projects.projects
    if not projects.projects or len(listed) >= projects.total:
        break
    page += 1
step("list projects page by page (per_page)", project.id in [p.id for p in listed], listed)

receiver = os.environ["WO_RECEIVER_URL"]
events = ["deployment.succeeded", "deployment.failed"]
webhook = webhooks_api.create_webhook(project.id, CreateWebhook(url=receiver, events=events, secret="s3cret"))
step("create a webhook", webhook.enabled is True and webhook.has_secret is True, webhook)

bare = webhooks_api.list_webhooks(project.id).actual_instance
paged = webhooks_api.list_webhooks(project.id, page=1, page_size=1).actual_instance
step(
    "list webhooks, bare and paged (page_size)",
    [w.id for w in bare] == [webhook.id] and isinstance(paged, WebhookPage) and paged.total == 1,
    (bare, paged),
)

got = webhooks_api.get_webhook(project.id, webhook.id)
step("get the webhook", got.id == webhook.id and got.url == receiver, got)

disabled = webhooks_api.update_webhook(project.id, webhook.id, UpdateWebhook(enabled=False))
step("disable it", disabled.enabled is False and disabled.events == webhook.events, disabled)
enabled = webhooks_api.update_webhook(project.id, webhook.id, UpdateWebhook(enabled=True))
step("enable it", enabled.enabled is True, enabled)

sent = webhooks_api.send_test_event(project.id, webhook.id)
step("a test event with no body", sent.success is True and sent.error_message is None, sent)
failed = webhooks_api.send_test_event(project.id, webhook.id, TestEventRequest(event_type="deployment.failed"))
step("a test event the receiver fails", failed.success is False and failed.status_code == 500, failed)
webhooks_api.send_test_event(project.id, webhook.id)

ids, cursor = [], None
while True:
    answer = deliveries_api.list_deliveries_with_http_info(project.id, webhook.id, limit=1, cursor=cursor)
    ids += [d.id for d in answer.data]
    cursor = next_cursor(answer.headers)
    if cursor is None:
        break
step("page through the deliveries with the Link header's cursor", len(ids) == 3 and ids == sorted(ids, reverse=True), ids)

delivery = deliveries_api.get_delivery(project.id, webhook.id, failed.delivery_id)
step("get one delivery", delivery.event_type == "deployment.failed" and delivery.success is False, delivery)

replayed = deliveries_api.retry_delivery(project.id, webhook.id, failed.delivery_id)
step("replay it", replayed.delivery_id > failed.delivery_id and replayed.error_message is not None, replayed)

status, bad = error_of(
    lambda: webhooks_api.create_webhook(
        project.id, CreateWebhook(url=receiver, events=events, format="template", template="{% if %}")
    )
)
step("a 400 with the field's path", status == 400 and bad.error.details[0].path == "body.template", bad)

status, missing = error_of(lambda: webhooks_api.get_webhook(project.id, 999999))
step("a 404", status == 404 and missing.error.code == "not_found", missing)
print(f"{steps}/{steps} steps passed")
