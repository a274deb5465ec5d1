import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, Field, PageTitle, useAction } from '../components.js';
import { useLocation } from '../router.js';

// Sign-in and the invite page (the link `admin user invite` prints). Both end in a full page
// load, so the signed-in pages start from the new session.

/** Only our own pages are places to go back to after sign-in. */
function safeNext(next: string | null): string {
  return next && /^\/[a-z]/.test(next) && !next.startsWith('//') ? next : '/agents';
}

export function SignInPage() {
  const { query } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const res = await api.post<{ workspace_selected: boolean }>('/dashboard/auth/sign-in', {
        email,
        password,
      });
      window.location.assign(res.workspace_selected ? safeNext(query.get('next')) : '/workspaces');
    });
  };
  return (
    <main class="narrow" id="main">
      <PageTitle>Sign in</PageTitle>
      {query.get('expired') && (
        <p class="notice" role="status">
          Your session ended. Sign in again.
        </p>
      )}
      <form onSubmit={submit} class="card">
        <Field label="Email">
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field label="Password">
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="hint">
        No password yet? Ask an operator for an invite link (npm run admin -- user invite --id …).
      </p>
    </main>
  );
}

export function InvitePage() {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    setMismatch(password !== repeat);
    if (password !== repeat) return;
    action.run(async () => {
      await api.post('/dashboard/auth/invite', { token, password });
      window.location.assign('/agents');
    });
  };
  return (
    <main class="narrow" id="main">
      <PageTitle>Set your password</PageTitle>
      {!token ? (
        <p class="error" role="alert">
          This link has no invite token. Open the whole link you were given.
        </p>
      ) : (
        <form onSubmit={submit} class="card">
          <Field label="New password" hint="At least 10 characters.">
            <input
              type="password"
              name="new-password"
              autoComplete="new-password"
              required
              minLength={10}
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </Field>
          <Field label="Repeat the password">
            <input
              type="password"
              name="repeat-password"
              autoComplete="new-password"
              required
              value={repeat}
              onInput={(e) => setRepeat(e.currentTarget.value)}
            />
          </Field>
          {mismatch && (
            <p class="error" role="alert">
              The two passwords differ.
            </p>
          )}
          <ErrorNote error={action.error} />
          <button type="submit" class="primary" disabled={action.busy}>
            Set password and sign in
          </button>
        </form>
      )}
    </main>
  );
}
