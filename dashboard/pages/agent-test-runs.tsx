import { useEffect, useState } from 'preact/hooks';
import { type Agent, ApiFailure, api, type List, type TestRun, type TestScenario } from '../api.js';
import { Badge, ErrorNote, Field, useAction, useResource } from '../components.js';
import { FieldRefusal } from '../list-editor.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';

// The agent page's test runs (docs/calls.md, "Test runs"): scenarios typed here (the last ones are
// remembered in this browser, per agent), run against the agent as simulated callers the language
// model plays; each run's results with their calls, followed until the run is over.

const SHOWN_RUNS = 5;
const FOLLOW_EVERY_MS = 2000;

/** One scenario as the form holds it: text in every box. */
interface ScenarioDraft {
  name: string;
  caller_prompt: string;
  success_criteria: string;
  max_turns: string;
}

const blank = (): ScenarioDraft => ({ name: '', caller_prompt: '', success_criteria: '', max_turns: '12' });
const storageKey = (agentId: string) => `test-scenarios:${agentId}`;

function remembered(agentId: string): { scenarios: ScenarioDraft[]; runs: string } {
  try {
    const saved = JSON.parse(localStorage.getItem(storageKey(agentId)) ?? 'null');
    if (saved && Array.isArray(saved.scenarios) && saved.scenarios.length > 0) return saved;
  } catch {
    // Nothing usable remembered: start afresh.
  }
  return { scenarios: [blank()], runs: '1' };
}

function toRequest(drafts: ScenarioDraft[], runs: string) {
  return {
    scenarios: drafts.map(
      (draft): TestScenario => ({
        name: draft.name,
        caller_prompt: draft.caller_prompt,
        success_criteria: draft.success_criteria,
        // Empty: the API's default. Not a number: sent as such, so the API names the field.
        ...(draft.max_turns.trim() === '' ? {} : { max_turns: Number(draft.max_turns) }),
      }),
    ),
    ...(runs.trim() === '' ? {} : { runs_per_scenario: Number(runs) }),
  };
}

export function AgentTestRuns({ agent }: { agent: Agent }) {
  const { canWrite } = useSession();
  const start = remembered(agent.id);
  const [drafts, setDrafts] = useState<ScenarioDraft[]>(start.scenarios);
  const [runs, setRuns] = useState(start.runs);
  const action = useAction();
  const cancel = useAction();
  const list = useResource(
    () => api.get<List<TestRun>>(`/v1/agents/${agent.id}/test-runs?limit=${SHOWN_RUNS}`),
    [agent.id],
  );
  const going = list.data?.data.some((run) => run.status === 'queued' || run.status === 'running');
  useEffect(() => {
    if (!going) return;
    const timer = setInterval(list.reload, FOLLOW_EVERY_MS);
    return () => clearInterval(timer);
  }, [going]);

  const failure = action.error instanceof ApiFailure ? action.error : null;
  const refusalAt = (index: number, field: keyof ScenarioDraft) =>
    failure?.param === `scenarios[${index}].${field}` ? failure : null;
  const edit = (index: number, field: keyof ScenarioDraft, value: string) =>
    setDrafts(drafts.map((draft, i) => (i === index ? { ...draft, [field]: value } : draft)));

  const run = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      localStorage.setItem(storageKey(agent.id), JSON.stringify({ scenarios: drafts, runs }));
      await api.post<TestRun>(`/v1/agents/${agent.id}/test-runs`, toRequest(drafts, runs));
      list.reload();
    });
  };

  const box = (index: number, field: keyof ScenarioDraft, label: string, hint?: string) => (
    <Field label={label} hint={hint}>
      {field === 'caller_prompt' || field === 'success_criteria' ? (
        <textarea
          rows={2}
          name={`scenario-${index}-${field}`}
          readOnly={!canWrite}
          value={drafts[index]![field]}
          aria-invalid={refusalAt(index, field) ? true : undefined}
          onInput={(e) => edit(index, field, e.currentTarget.value)}
        />
      ) : (
        <input
          name={`scenario-${index}-${field}`}
          readOnly={!canWrite}
          inputMode={field === 'max_turns' ? 'numeric' : undefined}
          value={drafts[index]![field]}
          aria-invalid={refusalAt(index, field) ? true : undefined}
          onInput={(e) => edit(index, field, e.currentTarget.value)}
        />
      )}
      <FieldRefusal refusal={refusalAt(index, field)} />
    </Field>
  );

  return (
    <section class="card" aria-labelledby="agent-test-runs">
      <h2 id="agent-test-runs">Test runs</h2>
      <p class="hint">
        The language model plays each scenario's caller in a web call with this agent (draft or not), and each
        call is judged by the scenario's success criteria. At most 5 calls of a run go at once.
      </p>
      {canWrite && (
        <form onSubmit={run}>
          {drafts.map((_, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: scenarios are edited in place, never reordered.
            <fieldset key={index} class="test-scenario">
              <legend>{drafts[index]!.name || `Scenario ${index + 1}`}</legend>
              <div class="grid-2">
                {box(index, 'name', 'Scenario name')}
                {box(index, 'max_turns', 'Caller lines at most', '1 to 50; empty: 12.')}
              </div>
              {box(index, 'caller_prompt', 'Caller', 'Who the caller is and what they want.')}
              {box(index, 'success_criteria', 'Success criteria', 'What makes the conversation a success.')}
              {drafts.length > 1 && (
                <button
                  type="button"
                  class="danger"
                  onClick={() => setDrafts(drafts.filter((__, i) => i !== index))}
                >
                  Remove scenario
                </button>
              )}
            </fieldset>
          ))}
          <Field label="Runs of each scenario" hint="1 to 10.">
            <input
              name="runs-per-scenario"
              inputMode="numeric"
              value={runs}
              aria-invalid={failure?.param === 'runs_per_scenario' ? true : undefined}
              onInput={(e) => setRuns(e.currentTarget.value)}
            />
            <FieldRefusal refusal={failure?.param === 'runs_per_scenario' ? failure : null} />
          </Field>
          {action.error &&
          !failure?.param?.startsWith('scenarios[') &&
          failure?.param !== 'runs_per_scenario' ? (
            <ErrorNote error={action.error} />
          ) : null}
          <div class="actions">
            <button
              type="button"
              disabled={drafts.length >= 20}
              onClick={() => setDrafts([...drafts, blank()])}
            >
              Add scenario
            </button>
            <button type="submit" class="primary" disabled={action.busy}>
              Run tests
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={list.error ?? cancel.error} />
      {list.data?.data.length === 0 && <p class="empty">No test runs yet.</p>}
      {list.data?.data.map((testRun) => (
        <article key={testRun.id} class="test-run" aria-label={`Test run ${testRun.id}`}>
          <h3>
            <Badge value={testRun.status} /> {new Date(testRun.created_at).toLocaleString()}:{' '}
            <span class="test-summary">
              {testRun.summary.passed} passed, {testRun.summary.failed} failed, {testRun.summary.errored}{' '}
              errored
            </span>
          </h3>
          {canWrite && (testRun.status === 'queued' || testRun.status === 'running') && (
            <button
              type="button"
              disabled={cancel.busy}
              onClick={() =>
                cancel.run(async () => {
                  await api.post(`/v1/test-runs/${testRun.id}/cancel`);
                  list.reload();
                })
              }
            >
              Cancel run
            </button>
          )}
          <table>
            <thead>
              <tr>
                <th scope="col">Scenario</th>
                <th scope="col">Run</th>
                <th scope="col">Result</th>
                <th scope="col">Why</th>
                <th scope="col">Call</th>
              </tr>
            </thead>
            <tbody>
              {testRun.results.map((result) => (
                <tr key={`${result.scenario}-${result.run}-${result.call_id}`}>
                  <td>{result.scenario}</td>
                  <td>{result.run}</td>
                  <td>
                    <Badge value={result.status} />
                  </td>
                  <td>{result.reason ?? '–'}</td>
                  <td>{result.call_id ? <Link href={`/calls/${result.call_id}`}>Open call</Link> : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </article>
      ))}
    </section>
  );
}
