// Dynamic variables: `{{name}}` in an agent's `system_prompt`, `first_message` and
// `outbound_first_message` and in a call's `first_message` is replaced by the call's
// `metadata[name]` (spaces inside the braces are allowed: `{{ name }}`).
//
// - A placeholder whose name is not a key of the metadata stays as written, braces and all.
// - A key that is present is used even when its value is "" (the placeholder then disappears).
// - Values are inserted as they are: a value that itself contains `{{…}}` is not expanded again.
// - Escaping: a backslash right before `{{` keeps it literal and is removed, so `\{{name}}` is
//   spoken as `{{name}}` whatever the metadata holds. A `{{` without a closing `}}` needs no escape.
//
// The pattern is linear in the text (a system prompt is up to 50,000 characters): the name is
// everything between the braces, trimmed in code. An earlier `\{\{\s*([^{}]+?)\s*\}\}` let the
// lazy name and the spaces around it trade characters, quadratic on `{{a` and 49,000 spaces (16 s).
const PLACEHOLDER = /\\\{\{|\{\{([^{}]*)\}\}/g;

/** `text` with every `{{name}}` that the metadata has a value for filled in. */
export function fillVariables(text: string, metadata: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (match: string, inside: string | undefined) => {
    if (inside === undefined) return '{{';
    const name = inside.trim();
    return name && Object.hasOwn(metadata, name) ? metadata[name] : match;
  });
}
