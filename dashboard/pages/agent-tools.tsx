import { useState } from 'preact/hooks';
import { type Agent, type AgentToolInput, ApiFailure, api, type ToolsSecret } from '../api.js';
import { ErrorNote, Field, SecretOnce, useAction } from '../components.js';
import { FieldRefusal, ListActions, useListEditor } from '../list-editor.js';
import { useSession } from '../session.js';

// The agent page's tools (docs/agent-tools.md): edit the functions the agent's language model may
// call, saved as one PATCH of the whole array, and make the secret that signs their requests. The
// API checks every rule; its refusal is shown at the field its `param` names.

type ToolField = 'name' | 'description' | 'parameters' | 'url' | 'timeout_seconds' | 'speak_while_waiting';

/** One tool as the form holds it: text in every box, `parameters` as JSON text. */
interface ToolDraft {
  key: number;
  name: string;
  description: string;
  parameters: string;
  url: string;
  timeout_seconds: string;
  speak_while_waiting: string;
}

const NEW_PARAMETERS = JSON.stringify({ type: 'object', properties: {}, required: [] }, null, 2);
let nextKey = 0;

function draftOf(tool?: Agent['tools'][number]): ToolDraft {
  return {
    key: nextKey++,
    name: tool?.name ?? '',
    description: tool?.description ?? '',
    parameters: tool ? JSON.stringify(tool.parameters, null, 2) : NEW_PARAMETERS,
    url: tool?.url ?? 'https://',
    timeout_seconds: String(tool?.timeout_seconds ?? 10),
    speak_while_waiting: tool?.speak_while_waiting ?? '',
  };
}

/** The request's tools, or the first box whose JSON cannot be read. */
function toRequest(drafts: ToolDraft[]): AgentToolInput[] | ApiFailure {
  const tools: AgentToolInput[] = [];
  for (const [index, draft] of drafts.entries()) {
    let parameters: AgentToolInput['parameters'];
    try {
      parameters = JSON.parse(draft.parameters);
    } catch (error) {
      const param = `tools[${index}].parameters`;
      return new ApiFailure(
        0,
        'json_invalid',
        `${param} is not JSON: ${(error as Error).message}`,
        param,
        null,
      );
    }
    tools.push({
      name: draft.name,
      description: draft.description,
      parameters,
      url: draft.url,
      // Empty: the API's default. Not a number: sent as null, so the API names the field.
      ...(draft.timeout_seconds.trim() === '' ? {} : { timeout_seconds: Number(draft.timeout_seconds) }),
      speak_while_waiting: draft.speak_while_waiting === '' ? null : draft.speak_while_waiting,
    });
  }
  return tools;
}

/** What each editing section of the agent page gets: the saved agent, the last save's notice, and a way to report one. */
export interface AgentSectionProps {
  agent: Agent;
  notice: string | null;
  onChange: (done: string) => void;
}

export function AgentTools({ agent, notice, onChange }: AgentSectionProps) {
  const { canWrite } = useSession();
  // Deeper params (`tools[2].parameters.x`) count for the field.
  const editor = useListEditor<ToolDraft, ToolField>('tools', () => agent.tools.map(draftOf));
  const { drafts } = editor;
  const save = (event: Event) => {
    event.preventDefault();
    editor.action.run(async () => {
      const tools = toRequest(drafts);
      if (tools instanceof ApiFailure) throw tools;
      await api.patch(`/v1/agents/${agent.id}`, { tools });
      onChange('Tools saved.');
    });
  };

  const box = (index: number, field: ToolField, label: string, hint?: string) => {
    const wrong = editor.refusalAt(index, field);
    const common = {
      name: `tools-${index}-${field}`,
      readOnly: !canWrite,
      value: drafts[index]![field],
      'aria-invalid': wrong ? true : undefined,
      onInput: (e: { currentTarget: { value: string } }) => editor.edit(index, field, e.currentTarget.value),
    };
    return (
      <Field label={label} hint={hint}>
        {field === 'parameters' || field === 'description' ? (
          <textarea rows={field === 'parameters' ? 8 : 2} spellcheck={false} class="code" {...common} />
        ) : (
          <input {...common} inputMode={field === 'timeout_seconds' ? 'numeric' : undefined} />
        )}
        <FieldRefusal refusal={wrong} />
      </Field>
    );
  };

  return (
    <section class="card" aria-labelledby="agent-tools">
      <h2 id="agent-tools">Tools</h2>
      <p class="hint">
        Functions of yours the agent's language model may call during a call (at most 20). Each call is a
        signed POST to the tool's URL; see the tools secret below.
      </p>
      <form onSubmit={save}>
        {drafts.length === 0 && <p class="empty">No tools: the agent can talk, hang up and transfer.</p>}
        {drafts.map((draft, index) => (
          <fieldset key={draft.key} class="tool">
            <legend>{draft.name || `Tool ${index + 1}`}</legend>
            <div class="grid-2">
              {box(index, 'name', 'Name', 'A letter, then letters, digits and _.')}
              {box(index, 'url', 'URL', 'Public https address.')}
            </div>
            {box(index, 'description', 'Description', 'What the model reads to decide when to call it.')}
            {box(
              index,
              'parameters',
              'Parameters (JSON Schema)',
              'An object schema of the arguments, at most 16 KiB.',
            )}
            <div class="grid-2">
              {box(index, 'timeout_seconds', 'Timeout (seconds)', '1 to 30, per attempt.')}
              {box(
                index,
                'speak_while_waiting',
                'Line while waiting',
                'Said when the tool is called; empty: nothing.',
              )}
            </div>
            {canWrite && (
              <button type="button" class="danger" onClick={() => editor.remove(index)}>
                Remove tool
              </button>
            )}
          </fieldset>
        ))}
        <ListActions
          editor={editor}
          canWrite={canWrite}
          max={20}
          addLabel="Add tool"
          saveLabel="Save tools"
          onAdd={() => editor.add(draftOf())}
          notice={notice}
        />
      </form>
      <ToolsSecretPanel agentId={agent.id} />
    </section>
  );
}

/** Makes a new tools secret and shows it this once; the previous one stops signing at once. */
function ToolsSecretPanel({ agentId }: { agentId: string }) {
  const { canWrite } = useSession();
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  if (!canWrite) return null;
  const rotate = () =>
    window.confirm('Make a new tools secret? The previous one stops signing tool requests at once.') &&
    action.run(async () => {
      const made = await api.post<ToolsSecret>(`/v1/agents/${agentId}/tools-secret`);
      setSecret(made.secret);
    });
  return (
    <div class="tools-secret">
      <h3>Tools secret</h3>
      <p class="hint">
        Tool requests carry <code>Voice-Signature</code>, signed with this secret (none until you make one).
      </p>
      {secret && <SecretOnce label="New tools secret" secret={secret} />}
      <ErrorNote error={action.error} />
      <button type="button" disabled={action.busy} onClick={rotate}>
        {secret ? 'Make another secret' : 'Make a new secret'}
      </button>
    </div>
  );
}
