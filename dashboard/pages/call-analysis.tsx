import type { CallAnalysis } from '../api.js';
import { Empty } from '../components.js';

// The call page's analysis: what every call gets (summary, outcome, sentiment, action items), and
// what the agent's analysis plan asked for: the verdict on its criteria and the data, one row per
// field (docs/calls.md, "What a call produced").

/** A value of the plan's data as one cell: text as it is, anything else as JSON. */
const cell = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

export function CallAnalysisSection({ analysis, final }: { analysis: CallAnalysis | null; final: boolean }) {
  return (
    <section class="card" aria-labelledby="call-analysis">
      <h2 id="call-analysis">Analysis</h2>
      {analysis ? (
        <>
          <dl class="facts">
            <dt>Summary</dt>
            <dd>{analysis.summary}</dd>
            <dt>Outcome</dt>
            <dd>{analysis.outcome ?? '–'}</dd>
            <dt>Sentiment</dt>
            <dd>{analysis.sentiment ?? '–'}</dd>
            <dt>Action items</dt>
            <dd>{analysis.action_items.length ? analysis.action_items.join('; ') : '–'}</dd>
            {analysis.success !== null && (
              <>
                <dt>Verdict</dt>
                <dd>
                  <strong>{analysis.success ? 'Success' : 'Not a success'}</strong>
                  {analysis.success_reason ? `: ${analysis.success_reason}` : ''}
                </dd>
              </>
            )}
          </dl>
          {analysis.data && (
            <table aria-label="Call data">
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(analysis.data).map(([name, value]) => (
                  <tr key={name}>
                    <th scope="row">
                      <code>{name}</code>
                    </th>
                    <td>{value === null ? '–' : cell(value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      ) : (
        <Empty>{final ? 'No analysis for this call.' : 'Analysis follows when the call ends.'}</Empty>
      )}
    </section>
  );
}
