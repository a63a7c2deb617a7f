import type { ComponentChildren } from "preact";
import { Link, useLocation } from "wouter-preact";
import { session } from "../session";

export interface Crumb {
  label: string;
  href?: string;
}

/** The frame of every signed-in page: product bar with Sign out, breadcrumbs, then the page. */
export function Layout({ crumbs, children }: { crumbs: Crumb[]; children: ComponentChildren }) {
  const [, navigate] = useLocation();
  const signOut = () => {
    session.signOut();
    navigate("/sign-in", { replace: true });
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link href="/projects" class="brand">
          <img src="/favicon.svg" alt="" width={22} height={22} />
          webhook-operator
        </Link>
        <button type="button" class="button button-quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav class="crumbs" aria-label="Breadcrumb">
        <ol>
          {crumbs.map((crumb, i) => (
            <li key={crumb.label}>
              {crumb.href && i < crumbs.length - 1 ? (
                <Link href={crumb.href}>{crumb.label}</Link>
              ) : (
                <span aria-current={i === crumbs.length - 1 ? "page" : undefined}>{crumb.label}</span>
              )}
            </li>
          ))}
        </ol>
      </nav>
      <main id="main" class="page">
        {children}
      </main>
    </>
  );
}

/** Project > Settings: the settings navigation beside the section (Webhooks is its only section). */
export function SettingsFrame({ projectId, children }: { projectId: number; children: ComponentChildren }) {
  return (
    <div class="settings">
      <nav class="settings-nav" aria-label="Project settings">
        <h2 class="settings-title">Settings</h2>
        <Link
          href={`/projects/${projectId}/settings/webhooks`}
          class="settings-link active"
          aria-current="page"
        >
          Webhooks
        </Link>
      </nav>
      <div class="settings-body">{children}</div>
    </div>
  );
}
