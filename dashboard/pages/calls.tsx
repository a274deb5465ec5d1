import { useState } from 'preact/hooks';
import { type Agent, api, type Call, type List, query } from '../api.js';
import {
  Badge,
  Field,
  formatDuration,
  formatTime,
  ListTable,
  PageTitle,
  usePages,
  useResource,
} from '../components.js';
import { Link } from '../router.js';

interface Filters {
  agent_id: string;
  direction: string;
  created_after: string;
  created_before: string;
}

const EMPTY: Filters = { agent_id: '', direction: '', created_after: '', created_before: '' };

/** A date input's day as the API's date-time (UTC midnight). */
const day = (value: string) => (value ? `${value}T00:00:00Z` : '');

export function CallsPage() {
  const [filters, setFilters] = useState(EMPTY);
  const pages = usePages();
  const agents = useResource(() => api.get<List<Agent>>('/v1/agents?limit=100'), []);
  const calls = useResource(
    () =>
      api.get<List<Call>>(
        `/v1/calls${query({
          limit: 20,
          cursor: pages.cursor,
          agent_id: filters.agent_id,
          direction: filters.direction,
          created_after: day(filters.created_after),
          created_before: day(filters.created_before),
        })}`,
      ),
    [pages.cursor, filters],
  );
  const nameOf = new Map((agents.data?.data ?? []).map((a) => [a.id, a.name]));
  const set = (field: keyof Filters, value: string) => {
    pages.reset();
    setFilters({ ...filters, [field]: value });
  };
  return (
    <>
      <PageTitle>Calls</PageTitle>
      <form class="filters card" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Agent">
          <select
            name="agent_id"
            value={filters.agent_id}
            onChange={(e) => set('agent_id', e.currentTarget.value)}
          >
            <option value="">Any agent</option>
            {(agents.data?.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Direction">
          <select
            name="direction"
            value={filters.direction}
            onChange={(e) => set('direction', e.currentTarget.value)}
          >
            <option value="">Both</option>
            <option value="inbound">Inbound</option>
            <option value="outbound">Outbound</option>
          </select>
        </Field>
        <Field label="From day">
          <input
            type="date"
            name="created_after"
            value={filters.created_after}
            onChange={(e) => set('created_after', e.currentTarget.value)}
          />
        </Field>
        <Field label="Before day">
          <input
            type="date"
            name="created_before"
            value={filters.created_before}
            onChange={(e) => set('created_before', e.currentTarget.value)}
          />
        </Field>
        <button
          type="button"
          onClick={() => {
            pages.reset();
            setFilters(EMPTY);
          }}
        >
          Clear
        </button>
        <button type="button" onClick={calls.reload}>
          Refresh
        </button>
      </form>
      <ListTable
        resource={calls}
        empty="No calls match."
        columns={['Started', 'Agent', 'Direction', 'From → to', 'Status', 'Duration', 'Ended because']}
        row={(call) => (
          <tr key={call.id}>
            <td>
              <Link href={`/calls/${call.id}`}>{formatTime(call.started_at)}</Link>
            </td>
            <td>{call.agent_id ? (nameOf.get(call.agent_id) ?? 'deleted agent') : '–'}</td>
            <td>
              {call.direction} · {call.channel}
            </td>
            <td>
              {call.from ?? call.metadata.from_label ?? '–'} → {call.to ?? '–'}
            </td>
            <td>
              <Badge value={call.status} />
            </td>
            <td>{formatDuration(call.duration_seconds)}</td>
            <td>{call.end_reason?.replace(/_/g, ' ') ?? '–'}</td>
          </tr>
        )}
        pager={{ pages, label: 'Calls' }}
      />
    </>
  );
}
