import { useState } from 'preact/hooks';
import { type ApiKey, api, type List, query, SCOPES } from '../api.js';
import {
  ErrorNote,
  Field,
  formatTime,
  ListTable,
  PageTitle,
  SecretOnce,
  useAction,
  usePages,
  useResource,
} from '../components.js';
import { useSession } from '../session.js';

export function KeysPage() {
  const { canManage } = useSession();
  const pages = usePages();
  const keys = useResource(
    () => api.get<List<ApiKey>>(`/dashboard/api/keys${query({ limit: 20, cursor: pages.cursor })}`),
    [pages.cursor],
  );
  const action = useAction();
  const revoke = (key: ApiKey) => {
    if (!window.confirm(`Revoke the key "${key.name}"? Requests with it are refused within 30 seconds.`))
      return;
    action.run(async () => {
      await api.post(`/dashboard/api/keys/${key.id}/revoke`);
      keys.reload();
    });
  };
  return (
    <>
      <PageTitle>API keys</PageTitle>
      {canManage ? (
        <CreateKey onCreated={keys.reload} />
      ) : (
        <p class="hint">Owners and admins create and revoke keys. A key acts as the person who made it.</p>
      )}
      <section aria-labelledby="key-list">
        <h2 id="key-list">Keys of this workspace</h2>
        <ErrorNote error={action.error} />
        <ListTable
          resource={keys}
          empty="No keys yet."
          columns={['Name', 'Scopes', 'Made by', 'Created', 'Expires', 'State', canManage && 'Action']}
          row={(key) => {
            const expired = key.expires_at !== null && new Date(key.expires_at).getTime() <= Date.now();
            return (
              <tr key={key.id}>
                <th scope="row">{key.name}</th>
                <td class="scopes">{key.scopes.join(' ')}</td>
                <td class="break">{key.created_by ?? '–'}</td>
                <td>{formatTime(key.created_at)}</td>
                <td>{key.expires_at ? formatTime(key.expires_at) : 'never'}</td>
                <td>
                  {key.revoked_at ? `revoked ${formatTime(key.revoked_at)}` : expired ? 'expired' : 'active'}
                </td>
                {canManage && (
                  <td>
                    {!key.revoked_at && (
                      <button type="button" class="danger" disabled={action.busy} onClick={() => revoke(key)}>
                        Revoke
                      </button>
                    )}
                  </td>
                )}
              </tr>
            );
          }}
          pager={{ pages, label: 'Keys' }}
        />
      </section>
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<ApiKey | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const key = await api.post<ApiKey>('/dashboard/api/keys', {
        name,
        scopes,
        ...(expires ? { expires_at: `${expires}T00:00:00Z` } : {}),
      });
      setCreated(key);
      setName('');
      setScopes([]);
      setExpires('');
      onCreated();
    });
  };
  return (
    <details class="card" open={created !== null}>
      <summary>New key</summary>
      {created?.secret && <SecretOnce label={`Secret of "${created.name}"`} secret={created.secret} />}
      <form onSubmit={submit}>
        <Field label="Name">
          <input
            name="key-name"
            required
            maxLength={200}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        <fieldset>
          <legend>Scopes</legend>
          <div class="scope-grid">
            {SCOPES.map((scope) => (
              <label key={scope} class="check">
                <input
                  type="checkbox"
                  name="scopes"
                  value={scope}
                  checked={scopes.includes(scope)}
                  onChange={(e) =>
                    setScopes(
                      e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope),
                    )
                  }
                />
                {scope}
              </label>
            ))}
          </div>
        </fieldset>
        <Field label="Expires on (optional)" hint="UTC midnight of that day; empty: never.">
          <input
            type="date"
            name="expires"
            value={expires}
            onInput={(e) => setExpires(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create key
        </button>
      </form>
    </details>
  );
}
