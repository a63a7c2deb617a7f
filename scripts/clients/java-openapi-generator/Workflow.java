// The client suite's workflow (scripts/clients/run.sh) with the Java client openapi-generator makes.
// Java 8, the source level of the generated project.
package workflow;

import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import wo.ApiClient;
import wo.ApiException;
import wo.ApiResponse;
import wo.api.DeliveriesApi;
import wo.api.ProjectsApi;
import wo.api.WebhooksApi;
import wo.model.CreateProject;
import wo.model.CreateWebhook;
import wo.model.Delivery;
import wo.model.ErrorResponse;
import wo.model.Project;
import wo.model.ProjectList;
import wo.model.RetryResult;
import wo.model.TestEventRequest;
import wo.model.TestEventResult;
import wo.model.UpdateWebhook;
import wo.model.Webhook;
import wo.model.WebhookPage;

public final class Workflow {
  private static int steps = 0;

  private static void step(String name, boolean ok, Object got) {
    if (!ok) {
      System.err.printf("step %d (%s) failed: got %s%n", steps + 1, name, got);
      System.exit(1);
    }
    steps++;
    System.out.printf("ok %d %s%n", steps, name);
  }

  private static final Pattern NEXT = Pattern.compile("^<([^>]*)>;\\s*rel=\"next\"");

  /** The cursor of the Link header's rel="next" address, or null on the last page. */
  private static String nextCursor(Map<String, List<String>> headers) {
    for (Map.Entry<String, List<String>> header : headers.entrySet()) {
      if (!header.getKey().equalsIgnoreCase("link")) continue;
      Matcher match = NEXT.matcher(header.getValue().get(0));
      if (!match.find()) return null;
      for (String pair : URI.create(match.group(1)).getRawQuery().split("&")) {
        if (pair.startsWith("cursor=")) return pair.substring("cursor=".length());
      }
    }
    return null;
  }

  interface Call {
    void run() throws ApiException;
  }

  /** The ErrorResponse of a call that fails with `status`, or null. */
  private static ErrorResponse failure(int status, Call call) throws Exception {
    try {
      call.run();
    } catch (ApiException error) {
      return error.getCode() == status ? ErrorResponse.fromJson(error.getResponseBody()) : null;
    }
    return null;
  }

  public static void main(String[] args) throws Exception {
    ApiClient client = new ApiClient();
    client.setBasePath(System.getenv("WO_BASE_URL"));
    client.setBearerToken(System.getenv("WO_API_KEY"));
    ProjectsApi projects = new ProjectsApi(client);
    WebhooksApi webhooks = new WebhooksApi(client);
    DeliveriesApi deliveries = new DeliveriesApi(client);
    String slug = System.getenv("WO_CLIENT");
    String receiver = System.getenv("WO_RECEIVER_URL");

    Project project = projects.createProject(new CreateProject().name(slug).slug(slug));
    step("create a project", project.getSlug().equals(slug), project);

    List<Long> listed = new ArrayList<>();
    for (long page = 1; ; page++) {
      ProjectList answer = projects.listProjects(page, 2);
      answer.getProjects().forEach(p -> listed.add(p.getId()));
      if (answer.getProjects().isEmpty() || listed.size() >= answer.getTotal()) break;
    }
    step("list projects page by page (per_page)", listed.contains(project.getId()), listed);

    List<CreateWebhook.EventsEnum> events =
        Arrays.asList(CreateWebhook.EventsEnum.DEPLOYMENT_SUCCEEDED, CreateWebhook.EventsEnum.DEPLOYMENT_FAILED);
    Webhook webhook =
        webhooks.createWebhook(project.getId(), new CreateWebhook().url(receiver).events(events).secret("s3cret"));
    step("create a webhook", webhook.getEnabled() && webhook.getHasSecret(), webhook);

    List<Webhook> bare = webhooks.listWebhooks(project.getId(), null, null).getListWebhook();
    WebhookPage paged = webhooks.listWebhooks(project.getId(), 1L, 1).getWebhookPage();
    step(
        "list webhooks, bare and paged (page_size)",
        bare.size() == 1 && bare.get(0).getId().equals(webhook.getId()) && paged.getTotal() == 1,
        paged);

    Webhook got = webhooks.getWebhook(project.getId(), webhook.getId());
    step("get the webhook", got.getId().equals(webhook.getId()) && got.getUrl().equals(receiver), got);

    Webhook off = webhooks.updateWebhook(project.getId(), webhook.getId(), new UpdateWebhook().enabled(false));
    step("disable it", !off.getEnabled() && off.getEvents().size() == 2, off);
    Webhook on = webhooks.updateWebhook(project.getId(), webhook.getId(), new UpdateWebhook().enabled(true));
    step("enable it", on.getEnabled(), on);

    TestEventResult sent = webhooks.sendTestEvent(project.getId(), webhook.getId(), null);
    step("a test event with no body", sent.getSuccess() && sent.getErrorMessage() == null, sent);
    TestEventResult failed =
        webhooks.sendTestEvent(
            project.getId(),
            webhook.getId(),
            new TestEventRequest().eventType(TestEventRequest.EventTypeEnum.DEPLOYMENT_FAILED));
    step("a test event the receiver fails", !failed.getSuccess() && failed.getStatusCode() == 500, failed);
    webhooks.sendTestEvent(project.getId(), webhook.getId(), null);

    List<Long> ids = new ArrayList<>();
    String cursor = null;
    do {
      ApiResponse<List<Delivery>> answer =
          deliveries.listDeliveriesWithHttpInfo(project.getId(), webhook.getId(), 1, cursor, null, null);
      answer.getData().forEach(d -> ids.add(d.getId()));
      cursor = nextCursor(answer.getHeaders());
    } while (cursor != null);
    step(
        "page through the deliveries with the Link header's cursor",
        ids.size() == 3 && ids.get(0) > ids.get(1) && ids.get(1) > ids.get(2),
        ids);

    Delivery delivery = deliveries.getDelivery(project.getId(), webhook.getId(), failed.getDeliveryId());
    step(
        "get one delivery",
        delivery.getEventType().equals("deployment.failed") && !delivery.getSuccess(),
        delivery);

    RetryResult replayed = deliveries.retryDelivery(project.getId(), webhook.getId(), failed.getDeliveryId());
    step(
        "replay it",
        replayed.getDeliveryId() > failed.getDeliveryId() && replayed.getErrorMessage() != null,
        replayed);

    CreateWebhook badTemplate =
        new CreateWebhook().url(receiver).events(events).format(CreateWebhook.FormatEnum.TEMPLATE).template("{% if %}");
    ErrorResponse bad = failure(400, () -> webhooks.createWebhook(project.getId(), badTemplate));
    step(
        "a 400 with the field's path",
        bad != null && bad.getError().getDetails().get(0).getPath().equals("body.template"),
        bad);

    ErrorResponse missing = failure(404, () -> webhooks.getWebhook(project.getId(), 999999L));
    step("a 404", missing != null && missing.getError().getCode().equals("not_found"), missing);
    System.out.printf("%d/%d steps passed%n", steps, steps);
  }
}
