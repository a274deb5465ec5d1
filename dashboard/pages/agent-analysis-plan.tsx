import { useState } from 'preact/hooks';
import { ApiFailure, api } from '../api.js';
import { ErrorNote, Field, useAction } from '../components.js';
import { FieldRefusal } from '../list-editor.js';
import { useSession } from '../session.js';
import type { AgentSectionProps } from './agent-tools.js';

// The agent page's analysis plan (docs/calls.md, "What a call produced"): the data each call must
// produce, as a JSON Schema, and the criteria each call is judged by. Saved as one PATCH of the
// whole plan; both empty saves no plan. The API's refusal is shown at the box its `param` names.

type PlanField = 'data_schema' | 'success_criteria';

const EXAMPLE_SCHEMA = JSON.stringify(
  {
    type: 'object',
    properties: {
      callback_number: { type: ['string', 'null'], description: 'E.164, if the caller gave one' },
      wants_appointment: { type: 'boolean' },
    },
    required: ['callback_number', 'wants_appointment'],
    additionalProperties: false,
  },
  null,
  2,
);

/** The request's plan (null when both boxes are empty), or the box whose JSON cannot be read. */
function toRequest(schemaText: string, criteria: string) {
  let dataSchema: Record<string, unknown> | null = null;
  if (schemaText.trim() !== '') {
    try {
      dataSchema = JSON.parse(schemaText);
    } catch (error) {
      const param = 'analysis_plan.data_schema';
      return new ApiFailure(
        0,
        'json_invalid',
        `${param} is not JSON: ${(error as Error).message}`,
        param,
        null,
      );
    }
  }
  const successCriteria = criteria.trim() === '' ? null : criteria;
  return dataSchema === null && successCriteria === null
    ? null
    : { data_schema: dataSchema, success_criteria: successCriteria };
}

export function AgentAnalysisPlan({ agent, notice, onChange }: AgentSectionProps) {
  const { canWrite } = useSession();
  const plan = agent.analysis_plan;
  const [schemaText, setSchemaText] = useState(
    plan?.data_schema ? JSON.stringify(plan.data_schema, null, 2) : '',
  );
  const [criteria, setCriteria] = useState(plan?.success_criteria ?? '');
  const [dirty, setDirty] = useState(false);
  const action = useAction();
  const failure = action.error instanceof ApiFailure ? action.error : null;
  const refusalAt = (field: PlanField) =>
    failure?.param?.startsWith(`analysis_plan.${field}`) ? failure : null;

  const save = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const analysisPlan = toRequest(schemaText, criteria);
      if (analysisPlan instanceof ApiFailure) throw analysisPlan;
      await api.patch(`/v1/agents/${agent.id}`, { analysis_plan: analysisPlan });
      setDirty(false);
      onChange(analysisPlan ? 'Analysis plan saved.' : 'Analysis plan removed.');
    });
  };
  const edit = (set: (value: string) => void) => (e: { currentTarget: { value: string } }) => {
    set(e.currentTarget.value);
    setDirty(true);
  };

  return (
    <section class="card" aria-labelledby="agent-analysis-plan">
      <h2 id="agent-analysis-plan">Analysis plan</h2>
      <p class="hint">
        After each call the language model reads its transcript and fills in the data below, and judges the
        call against your success criteria. Both show on each call and in <code>call.completed</code>.
      </p>
      <form onSubmit={save}>
        <Field label="Data schema" hint='A JSON Schema of "type": "object", at most 16 KiB; empty: no data.'>
          <textarea
            name="analysis-plan-data-schema"
            rows={10}
            class="code"
            readOnly={!canWrite}
            value={schemaText}
            placeholder={EXAMPLE_SCHEMA}
            aria-invalid={refusalAt('data_schema') ? true : undefined}
            onInput={edit(setSchemaText)}
          />
          <FieldRefusal refusal={refusalAt('data_schema')} />
        </Field>
        <Field label="Success criteria" hint="What makes a call a success, in your words; empty: no verdict.">
          <textarea
            name="analysis-plan-success-criteria"
            rows={3}
            maxLength={2000}
            readOnly={!canWrite}
            value={criteria}
            aria-invalid={refusalAt('success_criteria') ? true : undefined}
            onInput={edit(setCriteria)}
          />
          <FieldRefusal refusal={refusalAt('success_criteria')} />
        </Field>
        {action.error && !refusalAt('data_schema') && !refusalAt('success_criteria') ? (
          <ErrorNote error={action.error} />
        ) : null}
        {canWrite && (
          <div class="actions">
            <button type="submit" class="primary" disabled={action.busy || !dirty}>
              Save analysis plan
            </button>
          </div>
        )}
        {notice && !dirty && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
      </form>
    </section>
  );
}
