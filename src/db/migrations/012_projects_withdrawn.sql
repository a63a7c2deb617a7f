-- A namespace's project whose namespace no longer matches NAMESPACE_SELECTOR is withdrawn, not deleted:
-- hidden from the API (not listed, 404 by id) with its webhooks, deliveries and rollouts kept, and shown
-- again as it was (same id) when the namespace matches again. A selector changed by mistake then costs
-- nothing; a deleted namespace still takes its project along (docs/kubernetes.md, "Projects are namespaces").
ALTER TABLE projects ADD COLUMN withdrawn boolean NOT NULL DEFAULT false;
