// The client suite's workflow (scripts/clients/run.sh) with the Go client openapi-generator makes.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"

	"github.com/example/wo"
)

var steps = 0

func step(name string, ok bool, got any) {
	if !ok {
		fmt.Fprintf(os.Stderr, "step %d (%s) failed: got %+v\n", steps+1, name, got)
		os.Exit(1)
	}
	steps++
	fmt.Printf("ok %d %s\n", steps, name)
}

// must stops at an error, printing the answer's body when there was one.
func must[T any](value T, _ *http.Response, err error) T {
	if err != nil {
		var answer *wo.GenericOpenAPIError
		if errors.As(err, &answer) {
			fmt.Fprintf(os.Stderr, "step %d failed: %v %s\n", steps+1, err, answer.Body())
		} else {
			fmt.Fprintf(os.Stderr, "step %d failed: %v\n", steps+1, err)
		}
		os.Exit(1)
	}
	return value
}

var nextLink = regexp.MustCompile(`^<([^>]*)>;\s*rel="next"`)

// nextCursor is the cursor of the Link header's rel="next" address, or "" on the last page.
func nextCursor(header http.Header) string {
	match := nextLink.FindStringSubmatch(header.Get("Link"))
	if match == nil {
		return ""
	}
	target, err := url.Parse(match[1])
	if err != nil {
		return ""
	}
	return target.Query().Get("cursor")
}

// failure is the status and ErrorResponse of a call that failed.
func failure(response *http.Response, err error) (int, *wo.ErrorResponse) {
	var answer *wo.GenericOpenAPIError
	if response == nil || !errors.As(err, &answer) {
		return 0, nil
	}
	model, _ := answer.Model().(wo.ErrorResponse)
	return response.StatusCode, &model
}

func main() {
	config := wo.NewConfiguration()
	config.Servers = wo.ServerConfigurations{{URL: os.Getenv("WO_BASE_URL")}}
	client := wo.NewAPIClient(config)
	ctx := context.WithValue(context.Background(), wo.ContextAccessToken, os.Getenv("WO_API_KEY"))
	slug := os.Getenv("WO_CLIENT")
	receiver := os.Getenv("WO_RECEIVER_URL")

	project := must(client.ProjectsAPI.CreateProject(ctx).CreateProject(*wo.NewCreateProject(slug, slug)).Execute())
	step("create a project", project.Slug == slug, project)

	var listed []int64
	for page := int64(1); ; page++ {
		answer := must(client.ProjectsAPI.ListProjects(ctx).Page(page).PerPage(2).Execute())
		for _, p := range answer.Projects {
			listed = append(listed, p.Id)
		}
		if len(answer.Projects) == 0 || int64(len(listed)) >= answer.Total {
			break
		}
	}
	found := false
	for _, id := range listed {
		found = found || id == project.Id
	}
	step("list projects page by page (per_page)", found, listed)

	events := []string{"deployment.succeeded", "deployment.failed"}
	create := wo.NewCreateWebhook(receiver, events)
	create.SetSecret("s3cret")
	webhook := must(client.WebhooksAPI.CreateWebhook(ctx, project.Id).CreateWebhook(*create).Execute())
	step("create a webhook", webhook.Enabled && webhook.HasSecret, webhook)

	bare := must(client.WebhooksAPI.ListWebhooks(ctx, project.Id).Execute())
	paged := must(client.WebhooksAPI.ListWebhooks(ctx, project.Id).Page(1).PageSize(1).Execute())
	step("list webhooks, bare and paged (page_size)",
		bare.ArrayOfWebhook != nil && len(*bare.ArrayOfWebhook) == 1 && (*bare.ArrayOfWebhook)[0].Id == webhook.Id &&
			paged.WebhookPage != nil && paged.WebhookPage.Total == 1, paged)

	got := must(client.WebhooksAPI.GetWebhook(ctx, project.Id, webhook.Id).Execute())
	step("get the webhook", got.Id == webhook.Id && got.Url == receiver, got)

	update := wo.NewUpdateWebhook()
	update.SetEnabled(false)
	off := must(client.WebhooksAPI.UpdateWebhook(ctx, project.Id, webhook.Id).UpdateWebhook(*update).Execute())
	step("disable it", !off.Enabled && len(off.Events) == 2, off)
	update.SetEnabled(true)
	on := must(client.WebhooksAPI.UpdateWebhook(ctx, project.Id, webhook.Id).UpdateWebhook(*update).Execute())
	step("enable it", on.Enabled, on)

	sent := must(client.WebhooksAPI.SendTestEvent(ctx, project.Id, webhook.Id).Execute())
	step("a test event with no body", sent.Success && sent.ErrorMessage.Get() == nil, sent)
	failedRequest := wo.NewTestEventRequest()
	failedRequest.SetEventType("deployment.failed")
	failed := must(client.WebhooksAPI.SendTestEvent(ctx, project.Id, webhook.Id).TestEventRequest(*failedRequest).Execute())
	step("a test event the receiver fails", !failed.Success && failed.StatusCode == 500, failed)
	must(client.WebhooksAPI.SendTestEvent(ctx, project.Id, webhook.Id).Execute())

	var ids []int64
	request := client.DeliveriesAPI.ListDeliveries(ctx, project.Id, webhook.Id).Limit(1)
	for {
		page, response, err := request.Execute()
		must(page, response, err)
		for _, d := range page {
			ids = append(ids, d.Id)
		}
		cursor := nextCursor(response.Header)
		if cursor == "" {
			break
		}
		request = request.Cursor(cursor)
	}
	step("page through the deliveries with the Link header's cursor",
		len(ids) == 3 && ids[0] > ids[1] && ids[1] > ids[2], ids)

	delivery := must(client.DeliveriesAPI.GetDelivery(ctx, project.Id, webhook.Id, failed.DeliveryId).Execute())
	step("get one delivery", delivery.EventType == "deployment.failed" && !delivery.Success, delivery)

	replayed := must(client.DeliveriesAPI.RetryDelivery(ctx, project.Id, webhook.Id, failed.DeliveryId).Execute())
	step("replay it", replayed.DeliveryId > failed.DeliveryId && replayed.ErrorMessage.Get() != nil, replayed)

	bad := wo.NewCreateWebhook(receiver, events)
	bad.SetFormat("template")
	bad.SetTemplate("{% if %}")
	_, response, err := client.WebhooksAPI.CreateWebhook(ctx, project.Id).CreateWebhook(*bad).Execute()
	status, answer := failure(response, err)
	step("a 400 with the field's path", status == 400 && answer != nil && len(answer.Error.Details) == 1 &&
		answer.Error.Details[0].Path == "body.template", answer)

	_, response, err = client.WebhooksAPI.GetWebhook(ctx, project.Id, 999999).Execute()
	status, answer = failure(response, err)
	step("a 404", status == 404 && answer != nil && answer.Error.Code == "not_found", answer)
	fmt.Printf("%d/%d steps passed\n", steps, steps)
}
