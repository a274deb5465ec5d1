// Failure types that the call activities throw and the call workflow tells apart, named once for both.

/**
 * A step asked to run as a local activity whose port calls out (a language model) refuses at once,
 * without doing anything; the workflow then runs it as an activity (workflows/call/steps.ts).
 */
export const RUNS_AS_ACTIVITY = 'RunsAsActivity';
