// One request to a control API of the service's own parts (the media gateway, the SIP side): a
// JSON POST with the shared bearer token, bounded in time. The caller says what a status means.

export interface ControlAnswer {
  status: number;
  ok: boolean;
  /** The answer's JSON body; {} when it has none or it is not JSON. */
  body: Record<string, unknown>;
}

/** The answer, or `unreachable(error)` thrown when the part was not reached in `timeoutMs`. */
export async function postControl(
  url: URL,
  request: { token: string; body: object; timeoutMs: number },
  unreachable: (error: unknown) => Error,
): Promise<ControlAnswer> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${request.token}` },
      body: JSON.stringify(request.body),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    throw unreachable(error);
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: response.status, ok: response.ok, body };
}
