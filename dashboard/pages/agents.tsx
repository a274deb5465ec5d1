import { useState } from 'preact/hooks';
import { type Agent, api, type List, query } from '../api.js';
import {
  Badge,
  ErrorNote,
  Field,
  formatTime,
  ListTable,
  PageTitle,
  useAction,
  usePages,
  useResource,
} from '../components.js';
import { Link, navigate } from '../router.js';
import { useSession } from '../session.js';

export function AgentsPage() {
  const { canWrite } = useSession();
  const pages = usePages();
  const agents = useResource(
    () => api.get<List<Agent>>(`/v1/agents${query({ limit: 20, cursor: pages.cursor })}`),
    [pages.cursor],
  );
  return (
    <>
      <PageTitle>Agents</PageTitle>
      {canWrite && <CreateAgent />}
      <section aria-labelledby="agent-list">
        <h2 id="agent-list">All agents</h2>
        <ListTable
          resource={agents}
          empty={<>No agents yet.{canWrite ? ' Create one above.' : ''}</>}
          columns={['Name', 'Status', 'Language', 'Voice', 'Updated']}
          row={(agent) => (
            <tr key={agent.id}>
              <td>
                <Link href={`/agents/${agent.id}`}>{agent.name}</Link>
              </td>
              <td>
                <Badge value={agent.status} />
              </td>
              <td>{agent.language ?? '–'}</td>
              <td>{agent.voice.voice_id ?? '–'}</td>
              <td>{formatTime(agent.updated_at)}</td>
            </tr>
          )}
          pager={{ pages, label: 'Agents' }}
        />
      </section>
    </>
  );
}

function CreateAgent() {
  const [name, setName] = useState('');
  const [prompt, setPrompt] = useState('');
  const [firstMessage, setFirstMessage] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const agent = await api.post<Agent>('/v1/agents', {
        name,
        ...(prompt ? { system_prompt: prompt } : {}),
        ...(firstMessage ? { first_message: firstMessage } : {}),
      });
      navigate(`/agents/${agent.id}`);
    });
  };
  return (
    <details class="card">
      <summary>New agent</summary>
      <form onSubmit={submit}>
        <Field label="Name">
          <input
            name="name"
            required
            maxLength={200}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        <Field label="System prompt" hint="What the agent is for and how it behaves. Needed to publish.">
          <textarea
            name="system_prompt"
            rows={4}
            value={prompt}
            onInput={(e) => setPrompt(e.currentTarget.value)}
          />
        </Field>
        <Field label="First message" hint="What it says when it picks up.">
          <input
            name="first_message"
            maxLength={500}
            value={firstMessage}
            onInput={(e) => setFirstMessage(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create agent
        </button>
      </form>
    </details>
  );
}
