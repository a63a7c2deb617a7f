import type { ComponentChildren } from "preact";
import { Redirect, Route, Switch } from "wouter-preact";
import { DeliveryPage } from "./pages/delivery";
import { ProjectsPage } from "./pages/projects";
import { SignInPage } from "./pages/sign-in";
import { WebhookPage } from "./pages/webhook";
import { EditWebhookPage, NewWebhookPage } from "./pages/webhook-form";
import { WebhooksPage } from "./pages/webhooks";
import { session } from "./session";

const base = "/projects/:p/settings/webhooks";
const id = (value: string | undefined) => Number(value);

/** Signed-in pages; without a key, the sign-in page (which returns here afterwards). */
function SignedIn({ children }: { children: ComponentChildren }) {
  if (session.key() === null) {
    return <Redirect to="/sign-in" replace state={{ returnTo: location.pathname }} />;
  }
  return <>{children}</>;
}

export function App() {
  return (
    <Switch>
      <Route path="/sign-in" component={SignInPage} />
      <Route path="/">
        <Redirect to="/projects" replace />
      </Route>
      <Route path="/projects">
        <SignedIn>
          <ProjectsPage />
        </SignedIn>
      </Route>
      <Route path={base}>
        {(p) => (
          <SignedIn>
            <WebhooksPage projectId={id(p.p)} />
          </SignedIn>
        )}
      </Route>
      <Route path={`${base}/new`}>
        {(p) => (
          <SignedIn>
            <NewWebhookPage projectId={id(p.p)} />
          </SignedIn>
        )}
      </Route>
      <Route path={`${base}/:w/edit`}>
        {(p) => (
          <SignedIn>
            <EditWebhookPage projectId={id(p.p)} webhookId={id(p.w)} />
          </SignedIn>
        )}
      </Route>
      <Route path={`${base}/:w/deliveries/:d`}>
        {(p) => (
          <SignedIn>
            <DeliveryPage projectId={id(p.p)} webhookId={id(p.w)} deliveryId={id(p.d)} />
          </SignedIn>
        )}
      </Route>
      <Route path={`${base}/:w`}>
        {(p) => (
          <SignedIn>
            <WebhookPage projectId={id(p.p)} webhookId={id(p.w)} />
          </SignedIn>
        )}
      </Route>
      <Route path="/projects/:p">
        {(p) => <Redirect to={`/projects/${p.p}/settings/webhooks`} replace />}
      </Route>
      <Route>
        <main id="main" class="signin">
          <div class="card signin-card">
            <h1>Page not found</h1>
            <p class="muted">There is nothing at this address.</p>
            <a href="/projects" class="button button-primary">
              Go to projects
            </a>
          </div>
        </main>
      </Route>
    </Switch>
  );
}
