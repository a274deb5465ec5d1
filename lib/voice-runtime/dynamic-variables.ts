// Dynamic variables: `{{name}}` in an agent's `system_prompt`, `first_message` and
// `outbound_first_message` and in a call's `first_message` is replaced by the call's
// `metadata[name]` (spaces inside the braces are allowed: `{{ name }}`).
//
// - A placeholder whose name is not a key of the metadata stays as written, braces and all.
// - A key that is present is used even when its value is "" (the placeholder then disappears).
// - Values are inserted as they are: a value that itself contains `{{…}}` is not expanded again.
// - Escaping: a backslash right before `{{` keeps it literal and is removed, so `\{{name}}` is
//   spoken as `{{name}}` whatever the metadata holds. A `{{` without a closing `}}` needs no escape.

const PLACEHOLDER = /\\\{\{|\{\{\s*([^{}]+?)\s*\}\}/g;

/** `text` with every `{{name}}` that the metadata has a value for filled in. */
export function fillVariables(text: string, metadata: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (match: string, name: string | undefined) => {
    if (name === undefined) return '{{';
    return Object.hasOwn(metadata, name) ? metadata[name] : match;
  });
}
