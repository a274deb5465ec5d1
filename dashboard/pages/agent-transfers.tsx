import { type Agent, api, type TransferDestinationInput } from '../api.js';
import { Field } from '../components.js';
import { FieldRefusal, ListActions, useListEditor } from '../list-editor.js';
import { useSession } from '../session.js';
import type { AgentSectionProps } from './agent-tools.js';

// The agent page's transfer destinations (docs/calls.md, "Where calls may go"): the only numbers
// the agent's language model may transfer a call to, saved as one PATCH of the whole array. The
// API checks each number as every number the service dials; its refusal is shown at the field its
// `param` names (`transfer_destinations[1].number`).

type DestinationField = 'number' | 'description' | 'mode' | 'message';

/** One destination as the form holds it: text in every box. */
interface DestinationDraft {
  key: number;
  number: string;
  description: string;
  mode: 'cold' | 'warm';
  message: string;
}

let nextKey = 0;

function draftOf(destination?: Agent['transfer_destinations'][number]): DestinationDraft {
  return {
    key: nextKey++,
    number: destination?.number ?? '+',
    description: destination?.description ?? '',
    mode: destination?.mode ?? 'cold',
    message: destination?.message ?? '',
  };
}

function toRequest(drafts: DestinationDraft[]): TransferDestinationInput[] {
  return drafts.map((draft) => ({
    number: draft.number.trim(),
    description: draft.description,
    mode: draft.mode,
    message: draft.message === '' ? null : draft.message,
  }));
}

export function AgentTransfers({ agent, notice, onChange }: AgentSectionProps) {
  const { canWrite } = useSession();
  const editor = useListEditor<DestinationDraft, DestinationField>('transfer_destinations', () =>
    agent.transfer_destinations.map(draftOf),
  );
  const { drafts } = editor;
  const save = (event: Event) => {
    event.preventDefault();
    editor.action.run(async () => {
      await api.patch(`/v1/agents/${agent.id}`, { transfer_destinations: toRequest(drafts) });
      onChange('Transfer destinations saved.');
    });
  };

  const box = (index: number, field: DestinationField, label: string, hint?: string) => {
    const wrong = editor.refusalAt(index, field);
    const common = {
      name: `transfer-${index}-${field}`,
      disabled: !canWrite,
      value: drafts[index]![field],
      'aria-invalid': wrong ? true : undefined,
      onInput: (e: { currentTarget: { value: string } }) => editor.edit(index, field, e.currentTarget.value),
    };
    return (
      <Field label={label} hint={hint}>
        {field === 'mode' ? (
          // Named apart from its options' text, which the wrapping label would otherwise take in.
          <select aria-label={label} {...common}>
            <option value="cold">Cold: hand the caller over at once</option>
            <option value="warm">Warm: brief the person first</option>
          </select>
        ) : field === 'message' ? (
          <textarea rows={2} {...common} />
        ) : (
          <input {...common} inputMode={field === 'number' ? 'tel' : undefined} />
        )}
        <FieldRefusal refusal={wrong} />
      </Field>
    );
  };

  return (
    <section class="card" aria-labelledby="agent-transfers">
      <h2 id="agent-transfers">Transfer destinations</h2>
      <p class="hint">
        The only numbers the agent may put a caller through to (at most 20). Numbers the caller names are
        never dialled; each number must be one your workspace may call.
      </p>
      <form onSubmit={save}>
        {drafts.length === 0 && (
          <p class="empty">
            No destinations: the agent transfers only to a call's own <code>transfer_to</code>, if any.
          </p>
        )}
        {drafts.map((draft, index) => (
          <fieldset key={draft.key} class="transfer-destination">
            <legend>{draft.description || `Destination ${index + 1}`}</legend>
            <div class="grid-2">
              {box(index, 'number', 'Number', 'E.164, such as +4722334455.')}
              {box(index, 'description', 'What it is for', 'The model reads it to choose.')}
            </div>
            <div class="grid-2">
              {box(index, 'mode', 'Mode')}
              {box(
                index,
                'message',
                'Briefing',
                'Warm transfers: told to the person first; empty: a summary.',
              )}
            </div>
            {canWrite && (
              <button type="button" class="danger" onClick={() => editor.remove(index)}>
                Remove destination
              </button>
            )}
          </fieldset>
        ))}
        <ListActions
          editor={editor}
          canWrite={canWrite}
          max={20}
          addLabel="Add destination"
          saveLabel="Save destinations"
          onAdd={() => editor.add(draftOf())}
          notice={notice}
        />
      </form>
    </section>
  );
}
