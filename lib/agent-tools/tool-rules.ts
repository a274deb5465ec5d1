// The bounds of an agent's tools (agent-tools spec section 1), shared by the API's schemas and
// checks and the call runtime.

export const MAX_TOOLS = 20;
export const TOOL_NAME_MAX_LENGTH = 64;
/**
 * The spec's name pattern, `^[A-Za-z][A-Za-z0-9_]{0,63}$`, less the built-in tools' names: one
 * pattern, so the document says both rules (a fixed look-ahead; linear in the name).
 */
export const TOOL_NAME_PATTERN = '^(?!(?:end_call|transfer_call)$)[A-Za-z][A-Za-z0-9_]{0,63}$';
export const RESERVED_TOOL_NAMES = ['end_call', 'transfer_call'] as const;
export const TOOL_DESCRIPTION_MAX_LENGTH = 1000;
/** `parameters` as JSON (UTF-8 bytes). */
export const TOOL_PARAMETERS_MAX_BYTES = 16 * 1024;
export const TOOL_TIMEOUT_SECONDS = { min: 1, max: 30, default: 10 } as const;
export const SPEAK_WHILE_WAITING_MAX_LENGTH = 200;
