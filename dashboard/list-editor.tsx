import { useState } from 'preact/hooks';
import { ApiFailure } from './api.js';
import { ErrorNote, useAction } from './components.js';

// What the agent page's list editors (tools, transfer destinations) share: the drafts of a list
// saved as one PATCH of the whole array, the API's refusal placed at the item and field its
// `param` names (`tools[2].url`, `transfer_destinations[0].number`), and the buttons under the list.

/**
 * The drafts of `field` (the request's array name), edited in place; `failure` and `at` say which
 * item's field the last refusal named (null: none, or a refusal of the whole list).
 */
export function useListEditor<Draft, Field extends string>(field: string, initial: () => Draft[]) {
  const [drafts, setDrafts] = useState(initial);
  const [dirty, setDirty] = useState(false);
  const action = useAction();
  const failure = action.error instanceof ApiFailure ? action.error : null;
  const match = new RegExp(`^${field}\\[(\\d{1,2})\\]\\.([a-z_]{1,40})`).exec(failure?.param ?? '');
  const at = match ? ([Number(match[1]), match[2] as Field] as const) : null;
  const change = (next: Draft[]) => {
    setDrafts(next);
    setDirty(true);
  };
  return {
    drafts,
    dirty,
    action,
    failure,
    /** The refusal when it names `field` of item `index`, else null. */
    refusalAt: (index: number, name: Field) => (at && at[0] === index && at[1] === name ? failure : null),
    /** A refusal of no item's field (the list itself): shown under the list. */
    listRefusal: failure && !at ? failure : null,
    edit: (index: number, name: Field, value: string) =>
      change(drafts.map((d, i) => (i === index ? { ...d, [name]: value } : d))),
    remove: (index: number) => change(drafts.filter((_, i) => i !== index)),
    add: (draft: Draft) => change([...drafts, draft]),
  };
}

/** The refusal shown under the field it names. */
export function FieldRefusal({ refusal }: { refusal: ApiFailure | null }) {
  return refusal ? (
    <span class="field-error" role="alert">
      {refusal.message}
    </span>
  ) : null;
}

/** Under the list: its refusals, Add and Save (for those who may write), and the last save's notice. */
export function ListActions(props: {
  editor: Pick<ReturnType<typeof useListEditor>, 'drafts' | 'dirty' | 'action' | 'failure' | 'listRefusal'>;
  canWrite: boolean;
  max: number;
  addLabel: string;
  saveLabel: string;
  onAdd: () => void;
  notice: string | null;
}) {
  const { editor } = props;
  const { action } = editor;
  return (
    <>
      {editor.listRefusal ? <ErrorNote error={editor.listRefusal} /> : null}
      {action.error && !editor.failure ? <ErrorNote error={action.error} /> : null}
      {props.canWrite && (
        <div class="actions">
          <button type="button" disabled={editor.drafts.length >= props.max} onClick={props.onAdd}>
            {props.addLabel}
          </button>
          <button type="submit" class="primary" disabled={action.busy || !editor.dirty}>
            {props.saveLabel}
          </button>
        </div>
      )}
      {props.notice && !editor.dirty && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
    </>
  );
}
