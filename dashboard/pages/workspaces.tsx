import { api, type Session } from '../api.js';
import { ErrorNote, PageTitle, useAction } from '../components.js';

/** The picker for a person with a role in several workspaces. */
export function WorkspacesPage({ session }: { session: Session }) {
  const action = useAction();
  const pick = (userId: string) =>
    action.run(async () => {
      await api.post('/dashboard/auth/workspace', { user_id: userId });
      window.location.assign('/agents');
    });
  return (
    <main class="narrow" id="main">
      <PageTitle>Choose a workspace</PageTitle>
      <p>
        Signed in as {session.email}. You have a role in {session.workspaces.length} workspace
        {session.workspaces.length === 1 ? '' : 's'}.
      </p>
      <ErrorNote error={action.error} />
      <ul class="choices">
        {session.workspaces.map((w) => (
          <li key={w.user_id}>
            <button type="button" disabled={action.busy} onClick={() => pick(w.user_id)}>
              <strong>{w.workspace_name ?? w.workspace_id}</strong> <span class="role">{w.role}</span>
              {session.member?.user_id === w.user_id ? ' (current)' : ''}
            </button>
          </li>
        ))}
      </ul>
    </main>
  );
}
