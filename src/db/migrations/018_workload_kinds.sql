-- Rollouts of StatefulSets and DaemonSets are deployments too (docs/kubernetes.md). The kind of the
-- workload a rollout belongs to; `name` stays the workload's name. Every existing row is a Deployment's.
-- Cancelling the rollouts of workloads missing from a complete list is done per kind: a list of
-- Deployments says nothing about StatefulSets.
ALTER TABLE deployments
  ADD COLUMN workload_kind text NOT NULL DEFAULT 'Deployment'
    CHECK (workload_kind IN ('Deployment', 'StatefulSet', 'DaemonSet'));
