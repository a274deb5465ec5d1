import { defaultPayloadConverter } from '@temporalio/common';

// Everything a workflow history says, as text, for tests that look for what must not be there (a
// secret). JSON.stringify of a fetched history is no such text: payloads (activity inputs and
// results, signals, workflow input) hold their data as bytes, which it prints as lists of numbers.
// Here every payload is decoded with the payload converter, and any other bytes as UTF-8.

const utf8 = new TextDecoder();

function isPayload(value: object): value is { data: Uint8Array; metadata: Record<string, Uint8Array> } {
  return 'data' in value && value.data instanceof Uint8Array && 'metadata' in value;
}

/** The history's strings and decoded payloads, one per line. */
export function historyText(history: unknown): string {
  const parts: string[] = [];
  const visit = (value: unknown) => {
    if (typeof value === 'string') parts.push(value);
    else if (value instanceof Uint8Array) parts.push(utf8.decode(value));
    else if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      if (isPayload(value)) {
        const decoded = defaultPayloadConverter.fromPayload(value);
        parts.push(typeof decoded === 'string' ? decoded : (JSON.stringify(decoded) ?? ''));
        // The raw bytes too: a payload the converter reads as binary still says what it holds.
        parts.push(utf8.decode(value.data));
      }
      Object.values(value).forEach(visit);
    }
  };
  visit(history);
  return parts.join('\n');
}

/** The names of the signals a workflow received, in order, from its fetched history. */
export function signalsReceived(history: {
  events?: { workflowExecutionSignaledEventAttributes?: { signalName?: string | null } | null }[] | null;
}): string[] {
  return (history.events ?? []).flatMap((event) => {
    const name = event.workflowExecutionSignaledEventAttributes?.signalName;
    return name ? [name] : [];
  });
}
