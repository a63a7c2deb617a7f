import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import type { Crumb } from "../components/layout";
import { paths } from "./paths";

const names = new Map<number, string>();

/** Projects > <name> > Settings > Webhooks, then the page's own crumbs. The name is looked up once. */
export function useProjectCrumbs(projectId: number, ...rest: Crumb[]): Crumb[] {
  const [name, setName] = useState(names.get(projectId));
  useEffect(() => {
    if (names.has(projectId)) return;
    api.projects(1).then(
      (list) => {
        for (const project of list.projects) names.set(project.id, project.name);
        setName(names.get(projectId));
      },
      () => {},
    );
  }, [projectId]);
  return [
    { label: "Projects", href: paths.projects },
    { label: name ?? `Project ${projectId}`, href: paths.webhooks(projectId) },
    { label: "Settings", href: paths.webhooks(projectId) },
    { label: "Webhooks", href: paths.webhooks(projectId) },
    ...rest,
  ];
}
