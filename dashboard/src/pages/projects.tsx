import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api } from "../api";
import { ErrorBox, Loading } from "../components/errors";
import { Layout } from "../components/layout";
import { useLoad } from "../use-load";
import { paths } from "./paths";

export function ProjectsPage() {
  const [page, setPage] = useState(1);
  const projects = useLoad(() => api.projects(page), [page]);
  const list = projects.data;
  const pages = list ? Math.max(1, Math.ceil(list.total / list.per_page)) : 1;
  return (
    <Layout crumbs={[{ label: "Projects" }]}>
      <div class="page-head">
        <h1>Projects</h1>
        <p class="muted">A project is a Kubernetes namespace. Choose one to manage its webhooks.</p>
      </div>
      <ErrorBox error={projects.error} />
      {!list && !projects.error && <Loading what="projects" />}
      {list && list.total === 0 && (
        <div class="empty card">
          <h2>No projects you can see</h2>
          <p class="muted">
            Projects appear when the operator sees their namespace, or an admin creates them.
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
                  <td>
                    <Link href={paths.webhooks(project.id)} class="strong">
                      {project.name}
                    </Link>
                  </td>
                  <td class="mono">{project.slug}</td>
                  <td class="num mono">{project.id}</td>
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
