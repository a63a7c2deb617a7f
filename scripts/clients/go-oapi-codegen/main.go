// The client suite's workflow (scripts/clients/run.sh) with the client oapi-codegen generates.
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"

	"workflow/api"
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

func must[T any](value T, err error) T {
	if err != nil {
		fmt.Fprintf(os.Stderr, "step %d failed: %v\n", steps+1, err)
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
	target := must(url.Parse(match[1]))
	return target.Query().Get("cursor")
}

func ptr[T any](value T) *T { return &value }

func main() {
	ctx := context.Background()
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+os.Getenv("WO_API_KEY"))
		return nil
	}
	client := must(api.NewClientWithResponses(os.Getenv("WO_BASE_URL"), api.WithRequestEditorFn(bearer)))
	slug := os.Getenv("WO_CLIENT")
	receiver := os.Getenv("WO_RECEIVER_URL")

	created := must(client.CreateProjectWithResponse(ctx, api.CreateProject{Name: slug, Slug: slug}))
	step("create a project", created.JSON201 != nil && created.JSON201.Slug == slug, string(created.Body))
	project := created.JSON201

	var listed []int64
	for page := int64(1); ; page++ {
		answer := must(client.ListProjectsWithResponse(ctx, &api.ListProjectsParams{Page: &page, PerPage: ptr(2)}))
		for _, p := range answer.JSON200.Projects {
			listed = append(listed, p.Id)
		}
		if len(answer.JSON200.Projects) == 0 || int64(len(listed)) >= answer.JSON200.Total {
			break
		}
	}
	found := false
	for _, id := range listed {
		found = found || id == project.Id
	}
	step("list projects page by page (per_page)", found, listed)

	events := []api.CreateWebhookEvents{api.CreateWebhookEventsDeploymentSucceeded, api.CreateWebhookEventsDeploymentFailed}
	made := must(client.CreateWebhookWithResponse(ctx, project.Id,
		api.CreateWebhook{Url: receiver, Events: events, Secret: ptr("s3cret")}))
	step("create a webhook", made.JSON201 != nil && made.JSON201.Enabled && made.JSON201.HasSecret, string(made.Body))
	webhook := made.JSON201

	bare := must(must(client.ListWebhooksWithResponse(ctx, project.Id, nil)).JSON200.AsListWebhooks200JSONResponseBody0())
	paged := must(must(client.ListWebhooksWithResponse(ctx, project.Id,
		&api.ListWebhooksParams{Page: ptr(int64(1)), PageSize: ptr(1)})).JSON200.AsWebhookPage())
	step("list webhooks, bare and paged (page_size)",
		len(bare) == 1 && bare[0].Id == webhook.Id && paged.Total == 1 && len(paged.Data) == 1, paged)

	got := must(client.GetWebhookWithResponse(ctx, project.Id, webhook.Id))
	step("get the webhook", got.JSON200 != nil && got.JSON200.Id == webhook.Id && got.JSON200.Url == receiver, string(got.Body))

	off := must(client.UpdateWebhookWithResponse(ctx, project.Id, webhook.Id, api.UpdateWebhook{Enabled: ptr(false)}))
	step("disable it", off.JSON200 != nil && !off.JSON200.Enabled && len(off.JSON200.Events) == 2, string(off.Body))
	on := must(client.UpdateWebhookWithResponse(ctx, project.Id, webhook.Id, api.UpdateWebhook{Enabled: ptr(true)}))
	step("enable it", on.JSON200 != nil && on.JSON200.Enabled, string(on.Body))

	sent := must(client.SendTestEventWithResponse(ctx, project.Id, webhook.Id, api.TestEventRequest{}))
	step("a test event with no event type", sent.JSON200 != nil && sent.JSON200.Success && sent.JSON200.ErrorMessage == nil,
		string(sent.Body))
	failedType := api.TestEventRequestEventTypeDeploymentFailed
	failedAnswer := must(client.SendTestEventWithResponse(ctx, project.Id, webhook.Id, api.TestEventRequest{EventType: &failedType}))
	step("a test event the receiver fails", failedAnswer.JSON200 != nil && !failedAnswer.JSON200.Success &&
		failedAnswer.JSON200.StatusCode == 500, string(failedAnswer.Body))
	failed := failedAnswer.JSON200
	must(client.SendTestEventWithResponse(ctx, project.Id, webhook.Id, api.TestEventRequest{}))

	var ids []int64
	params := &api.ListDeliveriesParams{Limit: ptr(1)}
	for {
		answer := must(client.ListDeliveriesWithResponse(ctx, project.Id, webhook.Id, params))
		for _, d := range *answer.JSON200 {
			ids = append(ids, d.Id)
		}
		cursor := nextCursor(answer.HTTPResponse.Header)
		if cursor == "" {
			break
		}
		params.Cursor = &cursor
	}
	step("page through the deliveries with the Link header's cursor",
		len(ids) == 3 && ids[0] > ids[1] && ids[1] > ids[2], ids)

	delivery := must(client.GetDeliveryWithResponse(ctx, project.Id, webhook.Id, failed.DeliveryId))
	step("get one delivery", delivery.JSON200 != nil && delivery.JSON200.EventType == "deployment.failed" &&
		!delivery.JSON200.Success, string(delivery.Body))

	replayed := must(client.RetryDeliveryWithResponse(ctx, project.Id, webhook.Id, failed.DeliveryId))
	step("replay it", replayed.JSON200 != nil && replayed.JSON200.DeliveryId > failed.DeliveryId &&
		replayed.JSON200.ErrorMessage != nil, string(replayed.Body))

	template := api.CreateWebhookFormatTemplate
	bad := must(client.CreateWebhookWithResponse(ctx, project.Id,
		api.CreateWebhook{Url: receiver, Events: events, Format: &template, Template: ptr("{% if %}")}))
	step("a 400 with the field's path", bad.JSON400 != nil && bad.JSON400.Error.Details != nil &&
		(*bad.JSON400.Error.Details)[0].Path == "body.template", string(bad.Body))

	missing := must(client.GetWebhookWithResponse(ctx, project.Id, 999999))
	step("a 404", missing.JSON404 != nil && missing.JSON404.Error.Code == "not_found", string(missing.Body))
	fmt.Printf("%d/%d steps passed\n", steps, steps)
}
