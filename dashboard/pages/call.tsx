import { useEffect } from 'preact/hooks';
import {
  type Agent,
  api,
  type Call,
  type CallEvent,
  type List,
  type ToolCall,
  type TranscriptLine,
  type TurnLatency,
} from '../api.js';
import {
  Badge,
  Empty,
  formatDuration,
  formatTime,
  ListTable,
  Loaded,
  PageTitle,
  useResource,
} from '../components.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { CallAnalysisSection } from './call-analysis.js';

/** A latency for the table; – when not measured (a text-only call has no speech timings). */
function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${Math.round(value)} ms`;
}

const FINAL = new Set(['completed', 'failed', 'no_answer', 'busy', 'canceled']);

/**
 * The recording as /v1 serves it, with the session standing in for a key (a viewer may listen):
 * the browser asks for byte ranges as it seeks. Channel 1 is the caller, channel 2 the agent.
 */
function RecordingPlayer({ callId }: { callId: string }) {
  const src = `/v1/calls/${callId}/recording`;
  return (
    <p class="recording">
      {/* biome-ignore lint/a11y/useMediaCaption: the transcript on this page is the recording's text; its lines have no timings a caption track needs */}
      <audio controls preload="metadata" src={src} aria-label="Call recording" />{' '}
      <a href={src} download={`call-${callId}.wav`}>
        Download WAV
      </a>{' '}
      (left: caller, right: agent)
    </p>
  );
}

export function CallPage({ id }: { id: string }) {
  const session = useSession();
  const call = useResource(() => api.get<Call>(`/v1/calls/${id}`), [id]);
  const transcript = useResource(() => api.get<List<TranscriptLine>>(`/v1/calls/${id}/transcript`), [id]);
  const events = useResource(() => api.get<List<CallEvent>>(`/dashboard/api/calls/${id}/events`), [id]);
  const turns = useResource(() => api.get<List<TurnLatency>>(`/dashboard/api/calls/${id}/turns`), [id]);
  const toolCalls = useResource(() => api.get<List<ToolCall>>(`/dashboard/api/calls/${id}/tool-calls`), [id]);
  const live = call.data && !FINAL.has(call.data.status);
  useEffect(() => {
    if (!live) return;
    // A call still going: follow it until it is final.
    const timer = setInterval(() => {
      call.reload();
      transcript.reload();
      events.reload();
      turns.reload();
      toolCalls.reload();
    }, 2000);
    return () => clearInterval(timer);
  }, [live]);
  const workflowUrl = session.temporal_ui_url
    ? `${session.temporal_ui_url}/namespaces/${encodeURIComponent(session.temporal_namespace)}/workflows/call-${id}`
    : null;
  return (
    <Loaded resource={call}>
      {(c) => (
        <>
          <p class="crumbs">
            <Link href="/calls">Calls</Link> /
          </p>
          <PageTitle>
            {c.direction === 'inbound' ? 'Inbound' : 'Outbound'} {c.channel} call
          </PageTitle>
          <section class="card" aria-labelledby="call-facts">
            <h2 id="call-facts">Overview</h2>
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <Badge value={c.status} /> {c.end_reason ? c.end_reason.replace(/_/g, ' ') : ''}
              </dd>
              <dt>Agent</dt>
              <dd>{c.agent_id ? <AgentName id={c.agent_id} /> : '–'}</dd>
              <dt>From → to</dt>
              <dd>
                {c.from ?? c.metadata.from_label ?? '–'} → {c.to ?? '–'}
              </dd>
              {c.answered_by && (
                <>
                  <dt>Answered by</dt>
                  <dd>
                    <Badge value={c.answered_by} />
                  </dd>
                </>
              )}
              {c.transfer && (
                <>
                  <dt>Transfer</dt>
                  <dd>
                    to {c.transfer.to}: <Badge value={c.transfer.status} />
                    {c.transfer.failure ? ` (${c.transfer.failure.replace(/_/g, ' ')})` : ''}
                  </dd>
                </>
              )}
              <dt>Duration</dt>
              <dd>{formatDuration(c.duration_seconds)}</dd>
              <dt>Call id</dt>
              <dd>
                <code>{c.id}</code>
              </dd>
              <dt>Workflow</dt>
              <dd>
                {workflowUrl ? (
                  <a href={workflowUrl} target="_blank" rel="noreferrer">
                    call-{c.id} in the Temporal Web UI
                  </a>
                ) : (
                  <code>call-{c.id}</code>
                )}
              </dd>
            </dl>
            <h3>Timeline</h3>
            <ol class="timeline">
              {timeline(c, events.data?.data ?? [], toolCalls.data?.data ?? []).map((entry) => (
                <li
                  key={entry.id ?? `${entry.at}-${entry.text}`}
                  class={entry.result === undefined ? undefined : 'tool-call'}
                >
                  <time dateTime={entry.at}>{formatClock(entry.at)}</time> {entry.text}
                  {entry.result && (
                    <>
                      {' '}
                      → <code>{entry.result}</code>
                    </>
                  )}
                </li>
              ))}
              {!c.ended_at && <li>going on: {c.status.replace(/_/g, ' ')}</li>}
            </ol>
          </section>
          <CallAnalysisSection analysis={c.analysis} final={FINAL.has(c.status)} />
          <section class="card" aria-labelledby="call-recording">
            <h2 id="call-recording">Recording</h2>
            {c.has_recording ? (
              <RecordingPlayer callId={c.id} />
            ) : (
              <Empty>No recording: this call carried no audio, or its recording was deleted.</Empty>
            )}
          </section>
          <section class="card" aria-labelledby="call-transcript">
            <h2 id="call-transcript">Transcript</h2>
            <Loaded resource={transcript}>
              {(t) =>
                t.data.length === 0 ? (
                  <Empty>Nothing was said.</Empty>
                ) : (
                  <ol class="conversation">
                    {t.data.map((line) => (
                      <li key={line.index} class={`says-${line.role}`}>
                        <span class="who-says">{line.role}</span>
                        <span>{line.text}</span>
                      </li>
                    ))}
                  </ol>
                )
              }
            </Loaded>
          </section>
          <section class="card" aria-labelledby="call-turns">
            <h2 id="call-turns">Turn latency</h2>
            <ListTable
              resource={turns}
              empty="No agent turns measured."
              columns={['Line', 'Speech end → transcript', '→ first token', '→ first audio', 'Answer']}
              row={(turn) => (
                <tr key={turn.index}>
                  <td>{turn.index}</td>
                  <td>{ms(turn.fromSpeechEnd?.transcriptMs)}</td>
                  <td>{ms(turn.fromSpeechEnd?.firstTokenMs ?? turn.firstTokenMs)}</td>
                  <td>{ms(turn.fromSpeechEnd?.firstAudioMs)}</td>
                  <td>{ms(turn.answerMs)}</td>
                </tr>
              )}
            />
          </section>
          <section class="card" aria-labelledby="call-events">
            <h2 id="call-events">Events and deliveries</h2>
            <ListTable
              resource={events}
              empty="No events yet."
              columns={['Event', 'At', 'Deliveries']}
              row={(event) => (
                <tr key={event.id}>
                  <td>
                    {event.type}
                    <br />
                    <code class="small">{event.id}</code>
                  </td>
                  <td>{formatTime(event.created_at)}</td>
                  <td>
                    {event.deliveries.length === 0
                      ? 'no endpoint subscribed'
                      : event.deliveries.map((d) => (
                          <div key={d.id}>
                            <Link href={`/webhooks/${d.webhook_id}`}>{d.url ?? d.webhook_id}</Link>:{' '}
                            <Badge value={d.status} /> {d.attempts} attempt
                            {d.attempts === 1 ? '' : 's'}
                            {d.response_status ? `, HTTP ${d.response_status}` : ''}
                          </div>
                        ))}
                  </td>
                </tr>
              )}
            />
          </section>
        </>
      )}
    </Loaded>
  );
}

/** What the model was given, cut to a line. */
const RESULT_EXCERPT_LENGTH = 120;

/** A tool call as a line of the timeline: name, status, attempts, duration and the result's start. */
function toolCallEntry(toolCall: ToolCall): TimelineEntry {
  const attempts = `${toolCall.attempts} attempt${toolCall.attempts === 1 ? '' : 's'}`;
  const took = toolCall.duration_ms === null ? '' : `, ${toolCall.duration_ms} ms`;
  const http = toolCall.response_status === null ? '' : `, HTTP ${toolCall.response_status}`;
  const result = toolCall.result ?? '';
  return {
    id: toolCall.id,
    at: toolCall.created_at,
    text: `tool ${toolCall.name}: ${toolCall.status.replace(/_/g, ' ')} (${attempts}${took}${http})`,
    result: result.length > RESULT_EXCERPT_LENGTH ? `${result.slice(0, RESULT_EXCERPT_LENGTH)}…` : result,
  };
}

interface TimelineEntry {
  /** A tool call's id; other moments are told apart by time and text. */
  id?: string;
  at: string;
  text: string;
  /** A tool call's result excerpt ('' when it has none); absent on other moments. */
  result?: string;
}

/** The call's moments in order: its start, each event it produced and tool call it made, its end. */
function timeline(call: Call, events: CallEvent[], toolCalls: ToolCall[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    { at: call.started_at, text: call.direction === 'inbound' ? 'came in' : 'placed' },
    ...events.map((e) => ({ at: e.created_at, text: `event ${e.type}` })),
    ...toolCalls.map(toolCallEntry),
  ];
  if (call.ended_at) {
    const reason = call.end_reason ? ` (${call.end_reason.replace(/_/g, ' ')})` : '';
    entries.push({ at: call.ended_at, text: `ended ${call.status.replace(/_/g, ' ')}${reason}` });
  }
  return entries.sort((a, b) => a.at.localeCompare(b.at));
}

function formatClock(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

function AgentName({ id }: { id: string }) {
  const agent = useResource(() => api.get<Agent>(`/v1/agents/${id}`), [id]);
  if (agent.error) return <span>deleted agent</span>;
  return agent.data ? <Link href={`/agents/${id}`}>{agent.data.name}</Link> : <span>…</span>;
}
