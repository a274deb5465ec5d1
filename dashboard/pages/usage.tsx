import { useState } from 'preact/hooks';
import { api, type Usage } from '../api.js';
import { Field, Loaded, PageTitle, useResource } from '../components.js';

const DAY_MS = 86_400_000;
const isoDay = (date: Date) => date.toISOString().slice(0, 10);

interface DayUsage {
  day: string;
  calls: number;
  minutes: number;
}

/** Calls and minutes per UTC day from GET /v1/usage, one request per day, and the period's outcomes. */
async function loadUsage(from: string, to: string): Promise<{ days: DayUsage[]; total: Usage }> {
  const start = new Date(`${from}T00:00:00Z`);
  const end = new Date(new Date(`${to}T00:00:00Z`).getTime() + DAY_MS);
  if (!(start < end)) throw new Error('The first day must not be after the last.');
  const count = Math.round((end.getTime() - start.getTime()) / DAY_MS);
  if (count > 92) throw new Error('Choose at most 92 days.');
  const days = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const dayStart = new Date(start.getTime() + i * DAY_MS);
      const usage = await api.get<Usage>(
        `/v1/usage?start=${dayStart.toISOString()}&end=${new Date(dayStart.getTime() + DAY_MS).toISOString()}`,
      );
      return { day: isoDay(dayStart), calls: usage.calls, minutes: usage.minutes };
    }),
  );
  const total = await api.get<Usage>(`/v1/usage?start=${start.toISOString()}&end=${end.toISOString()}`);
  return { days, total };
}

export function UsagePage() {
  const today = new Date();
  const [from, setFrom] = useState(isoDay(new Date(today.getTime() - 13 * DAY_MS)));
  const [to, setTo] = useState(isoDay(today));
  const usage = useResource(() => loadUsage(from, to), [from, to]);
  return (
    <>
      <PageTitle>Usage</PageTitle>
      <form class="filters card" aria-label="Period" onSubmit={(e) => e.preventDefault()}>
        <Field label="First day">
          <input
            type="date"
            name="from"
            value={from}
            max={to}
            onChange={(e) => setFrom(e.currentTarget.value)}
          />
        </Field>
        <Field label="Last day">
          <input type="date" name="to" value={to} min={from} onChange={(e) => setTo(e.currentTarget.value)} />
        </Field>
      </form>
      <Loaded resource={usage}>
        {({ days, total }) => (
          <>
            <section class="card stats" aria-label="Totals">
              <div>
                <span class="stat">{total.calls}</span> calls
              </div>
              <div>
                <span class="stat">{total.minutes}</span> minutes
              </div>
              <div>
                <span class="stat">{total.average_duration_seconds}</span> s average
              </div>
            </section>
            <section class="card" aria-labelledby="per-day">
              <h2 id="per-day">Calls and minutes per day</h2>
              <BarChart days={days} />
              <details>
                <summary>As a table</summary>
                <div class="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Day (UTC)</th>
                        <th scope="col">Calls</th>
                        <th scope="col">Minutes</th>
                      </tr>
                    </thead>
                    <tbody>
                      {days.map((d) => (
                        <tr key={d.day}>
                          <th scope="row">{d.day}</th>
                          <td>{d.calls}</td>
                          <td>{d.minutes}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </details>
            </section>
            <section class="card" aria-labelledby="outcomes">
              <h2 id="outcomes">Outcomes</h2>
              <ul class="outcomes">
                {Object.entries(total.outcomes).map(([outcome, n]) => (
                  <li key={outcome}>
                    <span class="outcome-name">{outcome}</span>
                    <progress
                      value={n}
                      max={Math.max(1, total.calls)}
                      aria-label={`${outcome}: ${n} of ${total.calls}`}
                    />
                    <span>{n}</span>
                  </li>
                ))}
              </ul>
            </section>
          </>
        )}
      </Loaded>
    </>
  );
}

function BarChart({ days }: { days: DayUsage[] }) {
  const maxCalls = Math.max(1, ...days.map((d) => d.calls));
  const maxMinutes = Math.max(1, ...days.map((d) => d.minutes));
  const width = 100 / days.length;
  return (
    <figure class="chart">
      <svg
        viewBox="0 0 100 50"
        preserveAspectRatio="none"
        role="img"
        aria-label="Calls (dark) and minutes (light) per day"
      >
        {days.map((d, i) => (
          <g key={d.day}>
            <rect
              class="bar-calls"
              x={i * width + width * 0.1}
              width={width * 0.4}
              y={50 - (d.calls / maxCalls) * 48}
              height={(d.calls / maxCalls) * 48}
            >
              <title>{`${d.day}: ${d.calls} calls`}</title>
            </rect>
            <rect
              class="bar-minutes"
              x={i * width + width * 0.5}
              width={width * 0.4}
              y={50 - (d.minutes / maxMinutes) * 48}
              height={(d.minutes / maxMinutes) * 48}
            >
              <title>{`${d.day}: ${d.minutes} minutes`}</title>
            </rect>
          </g>
        ))}
      </svg>
      <div class="chart-days" aria-hidden="true">
        <span>{days[0]?.day}</span>
        {days.length > 2 && <span>{days[Math.floor(days.length / 2)]?.day}</span>}
        {days.length > 1 && <span>{days.at(-1)?.day}</span>}
      </div>
      <figcaption>
        <span class="key key-calls" /> calls (max {maxCalls}) <span class="key key-minutes" /> minutes (max{' '}
        {maxMinutes}) · {days[0]?.day} to {days.at(-1)?.day}
      </figcaption>
    </figure>
  );
}
