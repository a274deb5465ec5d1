import { useEffect, useRef, useState } from 'preact/hooks';
import { type Agent, api, type List, type TranscriptLine, type Voice } from '../api.js';
import {
  Badge,
  ErrorNote,
  Field,
  Loaded,
  Loading,
  PageTitle,
  useAction,
  useResource,
} from '../components.js';
import { Link, navigate } from '../router.js';
import { useSession } from '../session.js';
import { useTalk } from '../use-talk.js';
import { AgentAnalysisPlan } from './agent-analysis-plan.js';
import { AgentTelephone } from './agent-telephone.js';
import { AgentTestRuns } from './agent-test-runs.js';
import { type AgentSectionProps, AgentTools } from './agent-tools.js';
import { AgentTransfers } from './agent-transfers.js';

type Editable =
  | 'name'
  | 'description'
  | 'language'
  | 'system_prompt'
  | 'first_message'
  | 'outbound_first_message';
const EDITABLE: Editable[] = [
  'name',
  'description',
  'language',
  'system_prompt',
  'first_message',
  'outbound_first_message',
];

export function AgentPage({ id }: { id: string }) {
  const agent = useResource(() => api.get<Agent>(`/v1/agents/${id}`), [id]);
  // Kept here: each section starts afresh from each saved version of the agent, and only the
  // section saved last shows its notice.
  const [saved, setSaved] = useState<{ section: string; notice: string } | null>(null);
  const section = (name: string, data: Agent): AgentSectionProps => ({
    agent: data,
    notice: saved?.section === name ? saved.notice : null,
    onChange: (notice) => {
      setSaved({ section: name, notice });
      agent.reload();
    },
  });
  return (
    <Loaded resource={agent}>
      {(data) => (
        <>
          <p class="crumbs">
            <Link href="/agents">Agents</Link> /
          </p>
          <PageTitle>{data.name}</PageTitle>
          <AgentEditor key={data.updated_at} {...section('settings', data)} />
          <AgentTools key={`tools-${data.updated_at}`} {...section('tools', data)} />
          <AgentTransfers key={`transfers-${data.updated_at}`} {...section('transfers', data)} />
          <AgentTelephone key={`telephone-${data.updated_at}`} {...section('telephone', data)} />
          <AgentAnalysisPlan key={`plan-${data.updated_at}`} {...section('plan', data)} />
          <TestPanel agent={data} />
          <AgentTestRuns agent={data} />
        </>
      )}
    </Loaded>
  );
}

function AgentEditor({ agent, notice, onChange }: AgentSectionProps) {
  const { canWrite } = useSession();
  // The agent's language's voices first (its default voice is one of them).
  const voices = useResource(
    () =>
      api.get<List<Voice>>(`/dashboard/api/voices?language=${encodeURIComponent(agent.language ?? 'nb-NO')}`),
    [agent.language],
  );
  const initial = Object.fromEntries(EDITABLE.map((f) => [f, agent[f] ?? ''])) as Record<Editable, string>;
  const [values, setValues] = useState(initial);
  const [voiceId, setVoiceId] = useState(agent.voice.voice_id ?? '');
  const action = useAction();
  const changed = EDITABLE.filter((f) => values[f] !== initial[f]);
  const voiceChanged = voiceId !== (agent.voice.voice_id ?? '') && voiceId !== '';

  const save = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const body: Record<string, string> = Object.fromEntries(changed.map((f) => [f, values[f]]));
      if (voiceChanged) body.voice_id = voiceId;
      await api.patch(`/v1/agents/${agent.id}`, body);
      onChange('Saved.');
    });
  };
  const act = (what: 'publish' | 'unpublish') =>
    action.run(async () => {
      await api.post(`/v1/agents/${agent.id}/${what}`);
      onChange(what === 'publish' ? 'Published: it now answers its numbers’ calls.' : 'Unpublished.');
    });
  const remove = () => {
    if (!window.confirm(`Delete the agent "${agent.name}"? Past calls keep their transcripts.`)) return;
    action.run(async () => {
      await api.del(`/v1/agents/${agent.id}`);
      navigate('/agents');
    });
  };
  const input = (field: Editable, label: string, hint?: string, multiline = false) => (
    <Field label={label} hint={hint}>
      {multiline ? (
        <textarea
          name={field}
          rows={6}
          readOnly={!canWrite}
          value={values[field]}
          onInput={(e) => setValues({ ...values, [field]: e.currentTarget.value })}
        />
      ) : (
        <input
          name={field}
          readOnly={!canWrite}
          value={values[field]}
          onInput={(e) => setValues({ ...values, [field]: e.currentTarget.value })}
        />
      )}
    </Field>
  );

  return (
    <section class="card" aria-labelledby="agent-settings">
      <div class="row-between">
        <h2 id="agent-settings">Settings</h2>
        <span>
          Status <Badge value={agent.status} />
        </span>
      </div>
      <form onSubmit={save}>
        <div class="grid-2">
          {input('name', 'Name')}
          {input('language', 'Language', 'BCP 47 tag, e.g. nb-NO or en-US.')}
        </div>
        {input('description', 'Description')}
        {input('system_prompt', 'System prompt', 'Needed to publish.', true)}
        <div class="grid-2">
          {input('first_message', 'First message', 'Said when it answers a call.')}
          {input(
            'outbound_first_message',
            'Outbound first message',
            'Said when a call it places is answered.',
          )}
        </div>
        <Field
          label="Voice"
          hint={`Provider: ${agent.voice.provider ?? '–'} · model: ${agent.llm.model ?? '–'}`}
        >
          {voices.data ? (
            <select
              name="voice_id"
              disabled={!canWrite}
              value={voiceId}
              onChange={(e) => setVoiceId(e.currentTarget.value)}
            >
              <option value="">{agent.voice.voice_id ? agent.voice.voice_id : 'Default voice'}</option>
              {voices.data.data.map((v) => (
                <option key={v.id} value={v.id}>
                  {v.name} ({v.gender ? `${v.language}, ${v.gender}` : v.language})
                </option>
              ))}
            </select>
          ) : (
            <Loading what="Loading voices" />
          )}
        </Field>
        <ErrorNote error={action.error ?? voices.error} />
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        {canWrite && (
          <div class="actions">
            <button
              type="submit"
              class="primary"
              disabled={action.busy || (changed.length === 0 && !voiceChanged)}
            >
              Save changes
            </button>
            {agent.status === 'published' ? (
              <button type="button" disabled={action.busy} onClick={() => act('unpublish')}>
                Unpublish
              </button>
            ) : (
              <button type="button" disabled={action.busy} onClick={() => act('publish')}>
                Publish
              </button>
            )}
            <button type="button" class="danger" disabled={action.busy} onClick={remove}>
              Delete
            </button>
          </div>
        )}
      </form>
    </section>
  );
}

const FINAL = new Set(['completed', 'failed', 'no_answer', 'busy', 'canceled']);

/** `{{name}}` placeholders, as the voice runtime fills them (lib/voice-runtime/dynamic-variables.ts); `\{{` is literal. */
const PLACEHOLDER = /(?<!\\)\{\{\s*([^{}]+?)\s*\}\}/g;

/** The variables the agent's prompt and greeting use, in the order they first appear. */
function variablesOf(agent: Agent): string[] {
  const text = [agent.system_prompt, agent.first_message].filter(Boolean).join('\n');
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((match) => match[1]!))];
}

/**
 * The test panel: a web call to this agent with the person in the browser as the caller. Their
 * lines go to the call's far end, typed or spoken (Talk: the microphone, use-talk.ts); the agent's
 * come back from the call as they are written (and, when talking, are heard).
 */
function TestPanel({ agent }: { agent: Agent }) {
  const { canWrite } = useSession();
  const talk = useTalk();
  const [callId, setCallId] = useState<string | null>(null);
  const [lines, setLines] = useState<TranscriptLine[]>([]);
  const [status, setStatus] = useState<{ status: string | null; end_reason: string | null } | null>(null);
  const [text, setText] = useState('');
  /** How the person takes part in the current call: typing, or talking through the microphone. */
  const [speaking, setSpeaking] = useState(false);
  const [metadata, setMetadata] = useState<Record<string, string>>({});
  const said = useRef(0);
  const action = useAction();
  const log = useRef<HTMLOListElement>(null);

  useEffect(() => {
    if (!callId) return;
    const source = new EventSource(`/dashboard/api/calls/${callId}/live`);
    source.addEventListener('line', (event) => {
      const line = JSON.parse((event as MessageEvent).data) as TranscriptLine;
      setLines((old) =>
        old.some((l) => l.index === line.index) ? old : [...old, line].sort((a, b) => a.index - b.index),
      );
    });
    source.addEventListener('status', (event) => {
      const next = JSON.parse((event as MessageEvent).data);
      setStatus(next);
      if (FINAL.has(next.status)) source.close();
    });
    return () => source.close();
  }, [callId]);
  useEffect(() => {
    log.current?.lastElementChild?.scrollIntoView({ block: 'nearest' });
  }, [lines.length]);

  if (!canWrite || !['draft', 'published'].includes(agent.status)) {
    return (
      <section class="card" aria-labelledby="test-panel">
        <h2 id="test-panel">Test panel</h2>
        <p class="hint">
          {canWrite ? 'Draft and published agents can be tried here.' : 'Viewers cannot place test calls.'}
        </p>
      </section>
    );
  }

  const ended = status?.status ? FINAL.has(status.status) : false;
  const variables = variablesOf(agent);
  const start = (speaking: boolean) =>
    action.run(async () => {
      // The microphone first: the browser may ask the person, and no call should wait for that.
      const mic = speaking ? await talk.openMicrophone() : null;
      setLines([]);
      setStatus(null);
      said.current = 0;
      // Only the values entered: an empty field leaves its {{variable}} as written, as a missing key does.
      const entered = Object.entries(metadata).filter(
        ([name, value]) => value !== '' && variables.includes(name),
      );
      const res = await api
        .post<{ call_id: string }>('/dashboard/api/test-calls', {
          agent_id: agent.id,
          ...(entered.length ? { metadata: Object.fromEntries(entered) } : {}),
          ...(mic ? { talk: true } : {}),
        })
        .catch((error: unknown) => {
          mic?.close();
          throw error;
        });
      setSpeaking(mic !== null);
      setCallId(res.call_id);
      if (mic) talk.connect(res.call_id, mic);
    });
  const say = (event: Event) => {
    event.preventDefault();
    const line = text.trim();
    if (!line || !callId) return;
    action.run(async () => {
      await api.post(`/dashboard/api/test-calls/${callId}/say`, { line: said.current, text: line });
      said.current += 1;
      setText('');
    });
  };
  const hangUp = () => callId && action.run(() => api.post(`/dashboard/api/test-calls/${callId}/hang-up`));

  return (
    <section class="card" aria-labelledby="test-panel">
      <div class="row-between">
        <h2 id="test-panel">Test panel</h2>
        {status && (
          <span>
            Call <Badge value={status.status} />{' '}
            {status.end_reason ? `(${status.end_reason.replace(/_/g, ' ')})` : ''}
          </span>
        )}
      </div>
      <p class="hint">
        Talk to this agent as a caller would, typing or (Talk) with your microphone: a web call through the
        same call workflow as every call.
      </p>
      {callId && (
        <ol class="conversation" ref={log} aria-live="polite" aria-label="Conversation">
          {lines.map((line) => (
            <li key={line.index} class={`says-${line.role}`}>
              <span class="who-says">{line.role === 'agent' ? agent.name : 'You'}</span>
              <span>{line.text}</span>
            </li>
          ))}
          {!ended && lines.length === 0 && <li class="hint">Connecting…</li>}
        </ol>
      )}
      <ErrorNote error={action.error} />
      {talk.problem && (
        <p class="error" role="alert">
          {talk.problem}
        </p>
      )}
      {(!callId || ended) && variables.length > 0 && (
        <fieldset class="call-metadata">
          <legend>Call metadata</legend>
          <p class="hint">
            The agent's prompt and greeting use these variables; the test call carries them as its metadata,
            as POST /calls does. Left empty, a variable stays as written.
          </p>
          {variables.map((name) => (
            <Field key={name} label={name}>
              <input
                name={`metadata-${name}`}
                autoComplete="off"
                maxLength={500}
                value={metadata[name] ?? ''}
                onInput={(e) => setMetadata({ ...metadata, [name]: e.currentTarget.value })}
              />
            </Field>
          ))}
        </fieldset>
      )}
      {!callId || ended ? (
        <div class="actions">
          <button type="button" class="primary" disabled={action.busy} onClick={() => start(false)}>
            {callId ? 'Start a new test call' : 'Start a test call'}
          </button>
          <button
            type="button"
            disabled={action.busy || !talk.available}
            aria-describedby={talk.available ? undefined : 'talk-unavailable'}
            onClick={() => start(true)}
          >
            Talk
          </button>
          {callId && ended && <Link href={`/calls/${callId}`}>See this call in Calls</Link>}
          {!talk.available && talk.reason && (
            <p id="talk-unavailable" class="hint">
              {talk.reason}
            </p>
          )}
        </div>
      ) : speaking ? (
        <div class="actions">
          <p class="talking" role="status">
            {talk.active
              ? 'Talking: your microphone is on. Speak, and the agent answers aloud.'
              : 'Hanging up…'}
          </p>
          {talk.active && (
            <button type="button" class="danger" onClick={talk.hangUp}>
              Hang up
            </button>
          )}
        </div>
      ) : (
        <form class="say" onSubmit={say}>
          <label class="visually-hidden" for="caller-line">
            What you say
          </label>
          <input
            id="caller-line"
            name="caller-line"
            autoComplete="off"
            placeholder="Type what you say, then Enter"
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
          <button type="submit" disabled={action.busy || !text.trim()}>
            Say
          </button>
          <button type="button" class="danger" onClick={hangUp}>
            Hang up
          </button>
        </form>
      )}
    </section>
  );
}
