import { CALL_OUTCOMES } from '../../lib/analysis/analyzer.js';
import { minutesOf, startOfNextUtcMonth, startOfUtcMonth } from '../../lib/calls/call-limits.js';
import { parameterInvalid } from '../http/errors.js';
import { defineRoute, type RouteDefinition } from '../http/route.js';
import { usageQuerySchema, usageSchema } from '../schemas/call-usage.js';

// GET /usage: calls started in [start, end) of every direction and status. `minutes` adds up
// the calls' durations and rounds up to whole minutes (the same count the minutes quota uses);
// `average_duration_seconds` is over calls with a duration (answered ones), rounded; `outcomes`
// counts calls with an analysis by its outcome (anything else as `unknown`); `transfer_seconds`
// adds up the bridged transfers (the gateway's and the SIP side's, bounded by TRANSFER_MAX_MINUTES), which are
// not the agents' minutes and so not in `minutes`.

const usage = defineRoute({
  method: 'GET',
  path: '/usage',
  operationId: 'getUsage',
  summary: 'Calls and minutes for a period (default: the current calendar month, UTC).',
  scope: 'analytics:read',
  query: usageQuerySchema,
  responses: {
    200: { description: 'Usage', schema: usageSchema },
    400: { description: 'parameter_invalid: start is not before end.' },
  },
  async handler(ctx, { query }) {
    const now = new Date();
    const start = query.start ? new Date(query.start) : startOfUtcMonth(now);
    const end = query.end ? new Date(query.end) : startOfNextUtcMonth(query.start ? start : now);
    if (start.getTime() >= end.getTime()) throw parameterInvalid('end', 'end must be after start.');
    const connection = ctx.state.em.getConnection();
    const [totals] = await connection.execute<
      { calls: string; seconds: string; average: string | null; transfer_seconds: string }[]
    >(
      `select count(*) as calls, coalesce(sum(duration_seconds), 0) as seconds, avg(duration_seconds) as average,
              coalesce(sum(transfer_seconds), 0) as transfer_seconds
         from calls where workspace_id = ? and started_at >= ? and started_at < ?`,
      [ctx.state.auth.workspaceId, start, end],
    );
    const byOutcome = await connection.execute<{ outcome: string | null; calls: string }[]>(
      `select analysis->>'outcome' as outcome, count(*) as calls
         from calls
        where workspace_id = ? and started_at >= ? and started_at < ? and analysis is not null
        group by 1`,
      [ctx.state.auth.workspaceId, start, end],
    );
    const outcomes: Record<string, number> = Object.fromEntries(
      [...CALL_OUTCOMES, 'unknown'].map((outcome) => [outcome, 0]),
    );
    for (const row of byOutcome) {
      const key = (CALL_OUTCOMES as readonly (string | null)[]).includes(row.outcome)
        ? row.outcome!
        : 'unknown';
      outcomes[key] += Number(row.calls);
    }
    return {
      status: 200,
      body: {
        object: 'usage',
        period: { start: start.toISOString(), end: end.toISOString() },
        calls: Number(totals.calls),
        minutes: minutesOf(Number(totals.seconds)),
        average_duration_seconds: totals.average === null ? 0 : Math.round(Number(totals.average)),
        outcomes,
        transfer_seconds: Number(totals.transfer_seconds),
      },
    };
  },
});

export const usageRoutes: RouteDefinition[] = [usage];
