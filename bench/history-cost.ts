import proto from '@temporalio/proto';

// What a workflow history costs in Temporal: workflow tasks, activities, local activities
// (markers), timers, signals received and sent, child workflows, history events. Counted by
// bench/call-cost.ts and by the call workflow tests that hold the cost of a call down.

type History = proto.temporal.api.history.v1.IHistory;
const EventType = proto.temporal.api.enums.v1.EventType;

export interface Cost {
  workflowTasks: number;
  activities: number;
  localActivities: number;
  timers: number;
  signalsIn: number;
  signalsOut: number;
  children: number;
  events: number;
}

/** Counts one workflow's history. */
export function costOf(history: History): Cost {
  const cost: Cost = {
    workflowTasks: 0,
    activities: 0,
    localActivities: 0,
    timers: 0,
    signalsIn: 0,
    signalsOut: 0,
    children: 0,
    events: 0,
  };
  for (const event of history.events ?? []) {
    cost.events++;
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
        cost.workflowTasks++;
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        cost.activities++;
        break;
      case EventType.EVENT_TYPE_MARKER_RECORDED:
        if (event.markerRecordedEventAttributes?.markerName === 'core_local_activity') cost.localActivities++;
        break;
      case EventType.EVENT_TYPE_TIMER_STARTED:
        cost.timers++;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        cost.signalsIn++;
        break;
      case EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
        cost.signalsOut++;
        break;
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
        cost.children++;
        break;
    }
  }
  return cost;
}

export function add(a: Cost, b: Cost): Cost {
  return Object.fromEntries(
    Object.entries(a).map(([k, v]) => [k, v + b[k as keyof Cost]]),
  ) as unknown as Cost;
}
