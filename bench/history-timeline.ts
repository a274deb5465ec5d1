import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

// Where a call's wall-clock time goes: the events of its workflows (the call and its far end) on
// one clock, each with the time since the previous event of any of them. Used by bench/calls.ts
// (BENCH_TRACE=1) on a single call, to find waits that are not the simulated conversation.

const EventType = proto.temporal.api.enums.v1.EventType;

interface TimedEvent {
  atMs: number;
  workflow: string;
  name: string;
}

function millisOf(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  if (!time) return 0;
  return Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}

/** One line per event of the workflows `ids` (label → workflow id), oldest first. */
export async function historyTimeline(client: Client, ids: Record<string, string>): Promise<string> {
  const events: TimedEvent[] = [];
  for (const [workflow, workflowId] of Object.entries(ids)) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    for (const event of history.events ?? []) {
      let name = (EventType[event.eventType ?? 0] ?? String(event.eventType)).replace('EVENT_TYPE_', '');
      const marker = event.markerRecordedEventAttributes;
      if (marker) name += ` ${marker.markerName}`;
      const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (activity) name += ` ${activity}`;
      const timer = event.timerStartedEventAttributes?.startToFireTimeout;
      if (timer) name += ` ${millisOf(timer)} ms`;
      const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
      if (signal) name += ` ${signal}`;
      events.push({ atMs: millisOf(event.eventTime), workflow, name });
    }
  }
  events.sort((a, b) => a.atMs - b.atMs);
  const first = events[0]?.atMs ?? 0;
  let previous = first;
  const lines = events.map((event) => {
    const line = `${String(event.atMs - first).padStart(6)} ms  +${String(event.atMs - previous).padStart(5)}  ${event.workflow.padEnd(8)} ${event.name}`;
    previous = event.atMs;
    return line;
  });
  return lines.join('\n');
}
