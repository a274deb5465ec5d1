import { useState } from 'preact/hooks';
import { ApiFailure, api } from '../api.js';
import { ErrorNote, Field, useAction } from '../components.js';
import { FieldRefusal } from '../list-editor.js';
import { useSession } from '../session.js';
import type { AgentSectionProps } from './agent-tools.js';

// The agent page's telephone settings (docs/calls.md, "Answering machines" and "The keypad"): what
// the agent does when a machine answers an outbound call, and whether it may press keys. Saved as
// one PATCH of both settings, each whole; the API's refusal is shown at the box its `param` names.

export function AgentTelephone({ agent, notice, onChange }: AgentSectionProps) {
  const { canWrite } = useSession();
  const [detect, setDetect] = useState(agent.voicemail.detect);
  const [action, setAction] = useState(agent.voicemail.action);
  const [message, setMessage] = useState(agent.voicemail.message ?? '');
  const [sendKeys, setSendKeys] = useState(agent.keypad.send);
  const [dirty, setDirty] = useState(false);
  const saving = useAction();
  const failure = saving.error instanceof ApiFailure ? saving.error : null;
  const messageRefused = failure?.param === 'voicemail.message' ? failure : null;
  const changed =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      setDirty(true);
    };

  const save = (event: Event) => {
    event.preventDefault();
    saving.run(async () => {
      await api.patch(`/v1/agents/${agent.id}`, {
        voicemail: { detect, action, message: message.trim() === '' ? null : message },
        keypad: { send: sendKeys },
      });
      setDirty(false);
      onChange('Telephone settings saved.');
    });
  };

  return (
    <section class="card" aria-labelledby="agent-telephone">
      <h2 id="agent-telephone">Answering machines and keypad</h2>
      <form onSubmit={save}>
        <label class="check">
          <input
            type="checkbox"
            name="voicemail-detect"
            checked={detect}
            disabled={!canWrite}
            onChange={(e) => changed(setDetect)(e.currentTarget.checked)}
          />{' '}
          Detect answering machines on outbound calls
        </label>
        <Field label="When a machine answers">
          <select
            name="voicemail-action"
            value={action}
            disabled={!canWrite || !detect}
            onChange={(e) => changed(setAction)(e.currentTarget.value as typeof action)}
          >
            <option value="hang_up">Hang up</option>
            <option value="leave_message">Leave a message after the beep</option>
          </select>
        </Field>
        <Field
          label="Message for the machine"
          hint="Said after the beep; {{variables}} are filled from the call's metadata."
        >
          <textarea
            name="voicemail-message"
            rows={3}
            maxLength={1000}
            readOnly={!canWrite}
            value={message}
            aria-invalid={messageRefused ? true : undefined}
            onInput={(e) => changed(setMessage)(e.currentTarget.value)}
          />
          <FieldRefusal refusal={messageRefused} />
        </Field>
        <label class="check">
          <input
            type="checkbox"
            name="keypad-send"
            checked={sendKeys}
            disabled={!canWrite}
            onChange={(e) => changed(setSendKeys)(e.currentTarget.checked)}
          />{' '}
          The agent may press keys (phone menus)
        </label>
        {saving.error && !messageRefused ? <ErrorNote error={saving.error} /> : null}
        {canWrite && (
          <div class="actions">
            <button type="submit" class="primary" disabled={saving.busy || !dirty}>
              Save telephone settings
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
