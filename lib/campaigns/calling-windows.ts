import { DateTime } from 'luxon';
import type { CallingWindow, CampaignDay } from '../../db/entities/index.js';

// A campaign's calling windows: days and `HH:MM` ranges in an IANA timezone. Local times are
// turned into instants by Luxon for each date on its own, so a window keeps its local hours across
// a change to or from daylight saving time (09:00 in Oslo is 08:00 UTC in winter, 07:00 in summer).
// Used by the campaign's activity and the API; workflow code never sees wall-clock rules.

const WEEKDAYS: CampaignDay[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/**
 * The timezone names a campaign takes: `UTC` and the runtime's canonical IANA names
 * (`Intl.supportedValuesOf`, fixed by the pinned Node). The schema's enum (so the OpenAPI
 * document says exactly what is accepted, and ajv refuses the rest with 400); old aliases such as
 * `Europe/Kiev` are refused in favour of their canonical names (`Europe/Kyiv`).
 */
export const TIMEZONES: readonly string[] = [
  'UTC',
  ...Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC'),
];

/** `HH:MM`, 24-hour. */
export const HH_MM_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

/** The window's start and end on the local date `day` (Luxon's weekday 1 = Monday). */
function windowOn(day: DateTime, window: CallingWindow): { start: DateTime; end: DateTime } | null {
  if (!window.days.includes(WEEKDAYS[day.weekday - 1])) return null;
  const at = (hhmm: string) => {
    const minutes = minutesOf(hhmm);
    // A local time skipped by a DST change (02:30 on the spring-forward night) moves forward.
    return day.set({ hour: Math.floor(minutes / 60), minute: minutes % 60, second: 0, millisecond: 0 });
  };
  return { start: at(window.start), end: at(window.end) };
}

/**
 * `at` when a call may start then, else the start of the next window (null: no window ever
 * opens, which validation rules out). Empty `windows` means any time.
 */
export function windowStartAtOrAfter(at: Date, timezone: string, windows: readonly CallingWindow[]): Date {
  if (windows.length === 0) return at;
  const now = DateTime.fromJSDate(at, { zone: timezone });
  let best: DateTime | null = null;
  // Every weekday comes round within 8 local dates.
  for (let offset = -1; offset <= 8 && best === null; offset++) {
    const day = now.startOf('day').plus({ days: offset });
    for (const window of windows) {
      const span = windowOn(day, window);
      if (!span) continue;
      if (span.start <= now && now < span.end) return at;
      if (span.start > now && (best === null || span.start < best)) best = span.start;
    }
  }
  return best ? best.toJSDate() : at;
}

export function isInsideWindow(at: Date, timezone: string, windows: readonly CallingWindow[]): boolean {
  return windowStartAtOrAfter(at, timezone, windows).getTime() === at.getTime();
}
