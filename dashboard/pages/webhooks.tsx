import { useState } from 'preact/hooks';
import { api, CALL_EVENT_TYPES, type List, query, type Webhook, type WebhookWithSecret } from '../api.js';
import {
  Badge,
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
import { Link } from '../router.js';
import { useSession } from '../session.js';

export function WebhooksPage() {
  const { canManage } = useSession();
  const pages = usePages();
  const hooks = useResource(
    () => api.get<List<Webhook>>(`/v1/webhooks${query({ limit: 20, cursor: pages.cursor })}`),
    [pages.cursor],
  );
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      {canManage ? (
        <CreateWebhook onCreated={hooks.reload} />
      ) : (
        <p class="hint">Owners and admins add and change endpoints.</p>
      )}
      <section aria-labelledby="hook-list">
        <h2 id="hook-list">Endpoints</h2>
        <ListTable
          resource={hooks}
          empty="No endpoints yet."
          columns={['URL', 'Events', 'Status', 'Created']}
          row={(hook) => (
            <tr key={hook.id}>
              <td class="break">
                <Link href={`/webhooks/${hook.id}`}>{hook.url}</Link>
              </td>
              <td>{hook.events.join(', ')}</td>
              <td>
                <Badge value={hook.status} />
              </td>
              <td>{formatTime(hook.created_at)}</td>
            </tr>
          )}
          pager={{ pages, label: 'Endpoints' }}
        />
      </section>
    </>
  );
}

function CreateWebhook({ onCreated }: { onCreated: () => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(['call.completed']);
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const hook = await api.post<WebhookWithSecret>('/v1/webhooks', {
        url,
        events,
        ...(description ? { description } : {}),
      });
      setCreated(hook);
      setUrl('');
      setDescription('');
      onCreated();
    });
  };
  return (
    <details class="card" open={created !== null}>
      <summary>New endpoint</summary>
      {created?.secret && (
        <>
          <SecretOnce label="Signing secret" secret={created.secret} />
          <p>
            <Link href={`/webhooks/${created.id}`}>Open {created.url}</Link>
          </p>
        </>
      )}
      <form onSubmit={submit}>
        <Field label="URL" hint="Public https URL that receives signed POSTs.">
          <input type="url" name="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </Field>
        <fieldset>
          <legend>Events</legend>
          {CALL_EVENT_TYPES.map((type) => (
            <label key={type} class="check">
              <input
                type="checkbox"
                name="events"
                value={type}
                checked={events.includes(type)}
                onChange={(e) =>
                  setEvents(e.currentTarget.checked ? [...events, type] : events.filter((t) => t !== type))
                }
              />
              {type}
            </label>
          ))}
        </fieldset>
        <Field label="Description">
          <input
            name="description"
            maxLength={500}
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Add endpoint
        </button>
      </form>
    </details>
  );
}
