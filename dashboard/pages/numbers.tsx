import { useState } from 'preact/hooks';
import { type Agent, api, type List, type PhoneNumber, query } from '../api.js';
import { Badge, ErrorNote, ListTable, PageTitle, useAction, usePages, useResource } from '../components.js';
import { useSession } from '../session.js';

export function NumbersPage() {
  const pages = usePages();
  const numbers = useResource(
    () => api.get<List<PhoneNumber>>(`/v1/phone-numbers${query({ limit: 20, cursor: pages.cursor })}`),
    [pages.cursor],
  );
  const agents = useResource(() => api.get<List<Agent>>('/v1/agents?limit=100'), []);
  return (
    <>
      <PageTitle>Phone numbers</PageTitle>
      <p class="hint">A number's agent answers its calls once that agent is published.</p>
      <ListTable
        resource={numbers}
        empty="No numbers yet. An operator adds them (npm run admin -- number create)."
        columns={['Number', 'Label', 'Status', 'Agent']}
        row={(n) => (
          <NumberRow key={n.id} number={n} agents={agents.data?.data ?? []} onSaved={numbers.reload} />
        )}
        pager={{ pages, label: 'Phone numbers' }}
      />
    </>
  );
}

function NumberRow({
  number,
  agents,
  onSaved,
}: {
  number: PhoneNumber;
  agents: Agent[];
  onSaved: () => void;
}) {
  const { canWrite } = useSession();
  const [agentId, setAgentId] = useState(number.agent_id ?? '');
  const action = useAction();
  const current = agents.find((a) => a.id === number.agent_id);
  const save = () =>
    action.run(async () => {
      await api.patch(`/v1/phone-numbers/${number.id}`, { agent_id: agentId || null });
      onSaved();
    });
  return (
    <tr>
      <th scope="row">{number.number}</th>
      <td>{number.label ?? '–'}</td>
      <td>
        <Badge value={number.status} />
      </td>
      <td>
        {canWrite ? (
          <div class="inline">
            <select
              aria-label={`Agent for ${number.number}`}
              value={agentId}
              onChange={(e) => setAgentId(e.currentTarget.value)}
            >
              <option value="">No agent</option>
              {agents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name} ({a.status})
                </option>
              ))}
            </select>
            <button
              type="button"
              disabled={action.busy || agentId === (number.agent_id ?? '')}
              onClick={save}
            >
              {agentId ? 'Assign' : 'Clear'}
            </button>
          </div>
        ) : (
          (current?.name ?? (number.agent_id ? number.agent_id : 'No agent'))
        )}
        <ErrorNote error={action.error} />
      </td>
    </tr>
  );
}
