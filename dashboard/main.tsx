import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { api, type Session, setCsrfToken } from './api.js';
import { ErrorNote, Loading, useAction, useResource } from './components.js';
import { AgentPage } from './pages/agent.js';
import { AgentsPage } from './pages/agents.js';
import { InvitePage, SignInPage } from './pages/auth.js';
import { CallPage } from './pages/call.js';
import { CallsPage } from './pages/calls.js';
import { KeysPage } from './pages/keys.js';
import { NumbersPage } from './pages/numbers.js';
import { UsagePage } from './pages/usage.js';
import { WebhookPage } from './pages/webhook.js';
import { WebhooksPage } from './pages/webhooks.js';
import { WorkspacesPage } from './pages/workspaces.js';
import { Link, useLocation } from './router.js';
import { SessionContext } from './session.js';

const NAV = [
  ['/agents', 'Agents'],
  ['/calls', 'Calls'],
  ['/numbers', 'Phone numbers'],
  ['/webhooks', 'Webhooks'],
  ['/keys', 'API keys'],
  ['/usage', 'Usage'],
] as const;

function App() {
  const { path } = useLocation();
  if (path === '/sign-in') return <SignInPage />;
  if (path === '/invite') return <InvitePage />;
  return <SignedIn path={path} />;
}

function SignedIn({ path }: { path: string }) {
  const session = useResource(async () => {
    const s = await api.get<Session>('/dashboard/auth/session');
    setCsrfToken(s.csrf_token);
    return s;
  }, []);
  if (!session.data) {
    return <main class="narrow">{session.error ? <ErrorNote error={session.error} /> : <Loading />}</main>;
  }
  if (!session.data.member || path === '/workspaces') return <WorkspacesPage session={session.data} />;
  return (
    <SessionContext.Provider value={session.data}>
      <Layout session={session.data} path={path}>
        <Page path={path} />
      </Layout>
    </SessionContext.Provider>
  );
}

function Page({ path }: { path: string }) {
  const [, section, id] = path.split('/');
  useEffect(() => {
    // Moves focus to the new page's heading, so keyboard and screen-reader users land on it.
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [path]);
  if (section === 'agents') return id ? <AgentPage id={id} /> : <AgentsPage />;
  if (section === 'calls') return id ? <CallPage id={id} /> : <CallsPage />;
  if (section === 'numbers') return <NumbersPage />;
  if (section === 'webhooks') return id ? <WebhookPage id={id} /> : <WebhooksPage />;
  if (section === 'keys') return <KeysPage />;
  if (section === 'usage') return <UsagePage />;
  return <h1>Not found</h1>;
}

function Layout({
  session,
  path,
  children,
}: {
  session: Session;
  path: string;
  children: preact.ComponentChildren;
}) {
  const signOut = useAction();
  const member = session.member!;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">Voice agents</div>
        <nav aria-label="Sections">
          <ul>
            {NAV.map(([href, label]) => (
              <li key={href}>
                <Link href={href} aria-current={path.startsWith(href) ? 'page' : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>
            {member.workspace_name ?? member.workspace_id} · <span class="role">{member.role}</span>
          </span>
          <span class="email">{session.email}</span>
          {session.workspaces.length > 1 && <Link href="/workspaces">Switch workspace</Link>}
          <button
            type="button"
            class="link"
            disabled={signOut.busy}
            onClick={() =>
              signOut.run(async () => {
                await api.post('/dashboard/auth/sign-out');
                window.location.assign('/sign-in');
              })
            }
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        <ErrorNote error={signOut.error} />
        {children}
      </main>
      <footer class="bottom">
        {/* Pages of the API server outside the dashboard's router (api/api-reference.ts). */}
        <a class="bottom-link" href="/docs">
          API reference
        </a>
        <a class="bottom-link" href="/v1/openapi.json">
          OpenAPI document
        </a>
      </footer>
    </>
  );
}

const root = document.getElementById('app')!;
// The shell's "Loading…" placeholder goes; the app renders in its place.
root.textContent = '';
render(<App />, root);
