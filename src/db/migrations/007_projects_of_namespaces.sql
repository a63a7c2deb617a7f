-- Projects that are Kubernetes namespaces (made or adopted by the operator) go when their namespace
-- goes; projects created through the API without a namespace are never removed by the operator.
-- Existing rows start as false: the operator marks each namespace's project when it next sees it.
ALTER TABLE projects ADD COLUMN from_namespace boolean NOT NULL DEFAULT false;
