import { afterAll, describe, expect, it } from "vitest";
import {
  checkTemplate,
  closeTemplateThreads,
  isJsonType,
  renderTemplate,
  TemplateSyntaxError,
  templateLimits,
  templateThreadsRunning,
} from "../../../src/formats/template.js";
import { renderInThread } from "../../../src/formats/template-engine.js";
import { RenderError } from "../../../src/formats/types.js";
import { eventOf, exampleDetails } from "./events.js";

const envelope = eventOf("deployment.succeeded");
const render = (template: string, templateContentType: string | null = "text/plain") =>
  renderTemplate({ envelope, template, templateContentType });

afterAll(closeTemplateThreads);

async function syntaxErrorOf(source: string): Promise<TemplateSyntaxError> {
  const error = await checkTemplate(source).then(
    () => new Error("the template parsed"),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TemplateSyntaxError);
  return error as TemplateSyntaxError;
}

async function renderErrorOf(
  template: string,
  contentType: string | null = "text/plain",
): Promise<RenderError> {
  const error = await render(template, contentType).then(
    () => new Error("the template rendered"),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RenderError);
  return error as RenderError;
}

describe("template variables and filters", () => {
  it("gives `event` (the envelope without its payload) and `payload`", async () => {
    const rendered = await render(
      "{{ event.id }}|{{ event.event_type }}|{{ event.timestamp }}|{{ event.project_id }}|{{ event.payload }}|" +
        "{{ payload.project_name }}|{{ payload.deployment_id }}|{{ payload.url }}",
    );
    expect(rendered.body).toBe(
      `${envelope.id}|deployment.succeeded|2026-11-27T14:04:12.345Z|3||shop|42|https://shop.example.com`,
    );
    expect(rendered.contentType).toBe("text/plain");
  });

  it("gives the event's rollout details as `rollout`, null for an event without them", async () => {
    const template =
      "{% if rollout %}{% for i in rollout.changes.images %}{{ i.container }}={{ i.after }};{% endfor %}{% else %}none{% endif %}";
    const input = { envelope, template, templateContentType: "text/plain", rollout: exampleDetails() };
    expect((await renderTemplate(input)).body).toBe(
      "migrate=registry.example/shop-migrate:1.4.2;web=registry.example/shop:1.4.2;proxy=envoyproxy/envoy:v1.31;",
    );
    expect((await renderTemplate({ ...input, rollout: null })).body).toBe("none");
  });

  it("embeds any text safely in JSON with the json filter", async () => {
    const hostile = {
      ...envelope,
      payload: { commit_message: 'quote " backslash \\ newline \n </script> \u2028' },
    };
    const rendered = await renderTemplate({
      envelope: hostile,
      template: '{"text": {{ payload.commit_message | json }}}',
      templateContentType: null,
    });
    expect(rendered.contentType).toBe("application/json");
    expect(JSON.parse(rendered.body)).toEqual({ text: hostile.payload.commit_message });
  });

  it("formats dates in UTC, whatever the server's time zone", async () => {
    expect((await render('{{ event.timestamp | date: "%Y-%m-%d %H:%M" }}')).body).toBe("2026-11-27 14:04");
  });

  it("reads own properties only: no prototype or constructor reaches the template", async () => {
    const rendered = await render(
      "[{{ payload.constructor }}][{{ payload.__proto__ }}][{{ event.toString }}]",
    );
    expect(rendered.body).toBe("[][][]");
  });
});

describe("JSON content types", () => {
  it.each([
    ["application/json", true],
    ["application/json; charset=utf-8", true],
    ["application/cloudevents+json", true],
    ["application/vnd.example.v1+json", true],
    ["text/plain", false],
    ["application/x-www-form-urlencoded", false],
    ["application/jsonl", false],
  ])("%s is JSON: %s", (type, json) => {
    expect(isJsonType(type)).toBe(json);
  });

  it("refuses output that is not JSON when the declared type is, without echoing the output", async () => {
    const error = await renderErrorOf('{"token": "s3cr3t-value", oops}', "application/json");
    expect(error.message).toMatch(
      /not valid JSON \(at (position \d+|line \d+ column \d+)\).*application\/json/,
    );
    expect(error.message).not.toContain("s3cr3t");
  });

  it.each(["text/plain\r\nX-Injected: 1", "", " text/plain", "text/plain; charset=é"])(
    "refuses a content type that is no valid header value: %j",
    async (contentType) => {
      expect((await renderErrorOf("x", contentType)).message).toMatch(
        /content type is not a valid header value/,
      );
    },
  );

  it("sends output of another declared type as it is", async () => {
    expect((await render("not json at all", "text/plain")).body).toBe("not json at all");
  });
});

describe("templates that do not parse", () => {
  it.each([
    ["an unclosed tag, with its line", "line one\nline two\n{% if payload.url %}\nno end", 3],
    ["a malformed tag, with its line", "a\n\n\n{% for item %}{% endfor %}", 4],
    ["an unknown filter (strict filters)", "{{ payload.url | no_such_filter }}", 1],
  ])("%s", async (_name, source, line) => {
    const error = await syntaxErrorOf(source);
    expect(error.line).toBe(line);
    expect(error.message).toMatch(new RegExp(`^Line ${line}: `));
  });

  it.each(['{% include "payload" %}', '{% render "other" %}', '{% layout "base" %}'])(
    "refuses %s: a template reads no other template",
    async (source) => {
      expect((await syntaxErrorOf(source)).message).toMatch(
        /include, render, layout and block are not available/,
      );
    },
  );

  it("refuses a source over the size bound", async () => {
    const error = await syntaxErrorOf("x".repeat(templateLimits.sourceChars + 1));
    expect(error.message).toMatch(/at most 32768 are allowed/);
  });

  it("refuses nesting deeper than the bound, counted inside {% liquid %} too", async () => {
    const nested = (depth: number) => `${"{% if true %}".repeat(depth)}x${"{% endif %}".repeat(depth)}`;
    await checkTemplate(nested(templateLimits.nestingDepth));
    expect((await syntaxErrorOf(nested(templateLimits.nestingDepth + 1))).message).toMatch(
      /nests block tags 33 deep/,
    );
    // Deep enough to overflow a recursive parser's stack, and still inside the size bound.
    const deep = `${"{%if 1%}".repeat(1_800)}x${"{%endif%}".repeat(1_800)}`;
    expect((await syntaxErrorOf(deep)).message).toMatch(/nests block tags 1800 deep/);
    const liquidTag = `{% liquid\n${"if true\n".repeat(40)}echo 1\n${"endif\n".repeat(40)}%}`;
    expect((await syntaxErrorOf(liquidTag)).message).toMatch(/nests block tags 40 deep/);
  });

  it("checks a source once: a repeat is answered from what the first check found, with no thread", async () => {
    const source = "{{ payload.url }} checked once";
    await checkTemplate(source);
    const broken = "{% if %} checked once";
    const first = await syntaxErrorOf(broken);
    await closeTemplateThreads();
    await checkTemplate(source);
    expect(await syntaxErrorOf(broken)).toMatchObject({ message: first.message, line: 1 });
    expect(templateThreadsRunning()).toBe(0);
  });

  it("does not count a comment's content as nesting", async () => {
    await checkTemplate(`{% comment %}${"{% if x %}".repeat(100)}{% endcomment %}ok`);
  });
});

describe("hostile templates are bounded and fail with a RenderError", { timeout: 20_000 }, () => {
  it.each([
    ["a huge range", "{% for i in (1..100000000) %}x{% endfor %}", /more memory than a render may use/],
    [
      "nested loops (a billion iterations)",
      "{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..1000) %}{{ c }}{% endfor %}{% endfor %}{% endfor %}",
      new RegExp(`longer than the ${templateLimits.renderMs} ms a render may take`),
    ],
    [
      "a string doubled 40 times",
      '{% assign s = "xxxxxxxxxx" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}',
      /more memory than a render may use/,
    ],
    [
      "an array doubled 40 times",
      '{% assign a = "1,2,3" | split: "," %}{% for i in (1..40) %}{% assign a = a | concat: a %}{% endfor %}{{ a | size }}',
      /more memory than a render may use|longer than the \d+ ms a render may take/, // whichever comes first
    ],
    [
      "output past the bound",
      `{% for i in (1..3000) %}${"0123456789".repeat(10)}{% endfor %}`,
      /rendered more than 262144 bytes, the most that is sent/,
    ],
  ])("%s", async (_name, template, message) => {
    const error = await renderErrorOf(template);
    expect(error.message).toMatch(message);
  });

  it("stops the issue's one-piece bomb at the deadline, on a thread, with the event loop free", async () => {
    // One filter chain is one piece: liquidjs's own time limit is never checked inside it (about 10 s).
    const terms = Array.from({ length: 200 }, () => "x == 0").join(" or ");
    const bomb = `{{ (1..20000) | where_exp: "x", "${terms}" | size }}`;
    const order: string[] = [];
    const rendering = renderErrorOf(bomb).then((error) => {
      order.push("bomb answered");
      return error;
    });
    setTimeout(() => order.push("timer fired"), 10);
    const error = await rendering;
    expect(error.message).toBe(
      `The template failed to render: it ran longer than a template may (${templateLimits.stop.cpuMs} ms of processor time, ${templateLimits.stop.wallMs} ms in all), and was stopped`,
    );
    expect(order).toEqual(["timer fired", "bomb answered"]);
    // Remembered: the same template fails at once for a while instead of holding a thread again.
    expect((await renderErrorOf(bomb)).message).toMatch(
      /was stopped \(it was stopped so within the last minute/,
    );
    expect((await render("{{ payload.project_name }} after the bomb")).body).toBe("shop after the bomb");
  });

  it("counts the output in UTF-8 bytes, not characters", async () => {
    const times = (n: number) => `{% for i in (1..${n}) %}${"é".repeat(1000)}{% endfor %}`; // 2 bytes each
    expect(Buffer.byteLength((await render(times(131))).body)).toBe(262_000);
    expect((await renderErrorOf(times(132))).message).toMatch(/rendered more than 262144 bytes/); // 132,000 characters
  });

  it("tries once more when a cheap render was only paused past the time limit (a GC, a busy machine)", () => {
    let reads = 0;
    const payload = {
      get project_name() {
        reads += 1;
        if (reads === 1) {
          const until = Date.now() + templateLimits.renderMs + 50; // the first read stalls, as a paused process would
          while (Date.now() < until) {}
        }
        return "shop";
      },
    };
    // In this thread: a getter does not cross to a template thread.
    const rendered = renderInThread(
      "{{ payload.project_name }} to {{ event.event_type }}",
      { ...envelope, payload },
      "text/plain",
    );
    expect(rendered.body).toBe("shop to deployment.succeeded");
    expect(reads).toBe(2);
  });

  it("a template that no longer parses fails its delivery rather than the process", async () => {
    const error = await renderErrorOf("{% if %}");
    expect(error.message).toMatch(/^The template does not parse: Line 1: /);
  });

  it("a webhook of format template without a template fails with a clear message", async () => {
    await expect(renderTemplate({ envelope, template: null, templateContentType: null })).rejects.toThrow(
      "The webhook's format is template, but it has no template.",
    );
  });
});
