import type { Webhook } from "../api-types";

/** A webhook declared as a Kubernetes resource: the API refuses writes, so the page says where to change it. */
export function ManagedNotice({ webhook }: { webhook: Webhook }) {
  if (!webhook.managed_by) return null;
  const { namespace, name } = webhook.managed_by;
  return (
    <div class="alert alert-info managed" role="note">
      <strong>
        Managed by Webhook <code>{`${namespace}/${name}`}</code>
      </strong>
      <p>
        This webhook is declared as a Kubernetes resource; the operator keeps it as declared, so it is
        read-only here. Change it with:
      </p>
      <pre class="code">
        <code>{`kubectl edit webhooks.webhook-operator.io ${name} -n ${namespace}`}</code>
      </pre>
    </div>
  );
}
