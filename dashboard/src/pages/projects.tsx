import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api } from "../api";
import { ErrorBox, Loading } from "../components/errors";
import { Layout } from "../components/layout";
import { useServiceInfo } from "../service-info";
import { useLoad } from "../use-load";
import { paths } from "./paths";

export function ProjectsPage() {
  const [page, setPage] = useState(1);
  const projects = useLoad(() => api.projects(page), [page]);
  const kubernetes = useServiceInfo()?.kubernetes;
  const list = projects.data;
  const pages = list ? Math.max(1, Math.ceil(list.total / list.per_page)) : 1;
  return (
    <Layout crumbs={[{ label: "Projects" }]}>
      <div class="page-head">
        <h1>Projects</h1>
        <p class="muted">
          {kubernetes && "A project is a Kubernetes namespace. "}Choose a project to manage its webhooks.
        </p>
      </div>
      <ErrorBox error={projects.error} />
      {!list && !projects.error && <Loading what="projects" />}
      {list && list.total === 0 && (
        <div class="empty card">
          <h2>No projects you can see</h2>
          <p class="muted">
            {kubernetes
              ? "Projects appear when the operator sees their namespace, or an admin creates them."
              : "An admin creates projects through the API (POST /api/projects)."}
          </p>
        </div>
      )}
      {list && list.total > 0 && (
        <div class="card table-card">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Project</th>
                <th scope="col">Slug</th>
                <th scope="col" class="num">
                  ID
                </th>
              </tr>
            </thead>
            <tbody>
              {list.projects.map((project) => (
                <tr key={project.id}>
                  <td data-label="Project">
                    <Link href={paths.webhooks(project.id)} class="strong">
                      {project.name}
                    </Link>
                  </td>
                  <td data-label="Slug" class="mono">
                    {project.slug}
                  </td>
                  <td data-label="ID" class="num mono">
                    {project.id}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {pages > 1 && (
            <div class="pager">
              <button type="button" class="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <span class="muted">
                Page {page} of {pages}
              </span>
              <button type="button" class="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
                Next
              </button>
            </div>
          )}
        </div>
      )}
    </Layout>
  );
}
