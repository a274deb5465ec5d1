import { recordingStoreFor } from '../../lib/recordings/recording-store-from-settings.js';
import { fileResponses, partHeaders, rangeHeader, servedPart } from '../http/byte-ranges.js';
import { resourceMissing, upstreamUnavailable } from '../http/errors.js';
import { defineRoute, type RouteDefinition } from '../http/route.js';
import { uuidSchema } from '../schemas/common.js';
import { callParams, findCallOr404 } from './call-route-parts.js';

// A call's recording (spec voice-media-v1 section 5): the WAV file the media gateway wrote, served
// from the recordings' store (RECORDINGS_DIR, or the S3-compatible store of RECORDINGS_STORE=s3) as
// it is kept there (streamed, with byte ranges) and deleted on request.
// Both answer 404 resource_missing for a call of another workspace, a call that does not exist
// and a call without a recording alike.

const missing = { description: 'resource_missing: no such call in the workspace, or it has no recording.' };
const storeDown = {
  description:
    'upstream_unavailable: the recordings store (RECORDINGS_STORE=s3) did not answer; retry after Retry-After seconds.',
};
const noRecording = () => resourceMissing('recording', 'call_id');

/** The store's answer; a store that fails (RECORDINGS_STORE=s3 and it is down) is a 503 to retry, not a 500. */
async function fromStore<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch {
    throw upstreamUnavailable('The recordings store did not answer; retry shortly.');
  }
}

const get = defineRoute({
  method: 'GET',
  path: '/calls/:call_id/recording',
  operationId: 'getCallRecording',
  summary:
    "The call's recording: a WAV file, 8 kHz 16-bit PCM, channel 1 the caller and channel 2 the agent; one byte range with Range.",
  scope: 'calls:read',
  params: callParams,
  requestHeaders: rangeHeader,
  responses: { ...fileResponses('audio/wav', 'The recording'), 404: missing, 503: storeDown },
  async handler(ctx, { params }) {
    const { em, auth, deps } = ctx.state;
    const call = await findCallOr404(em, auth.workspaceId, params.call_id);
    const recording = await fromStore(recordingStoreFor(deps.settings).open(call.id));
    if (!recording) throw noRecording();
    let part: ReturnType<typeof servedPart>;
    try {
      part = servedPart(ctx.get('Range') || undefined, recording.size);
    } catch (error) {
      await recording.close();
      throw error;
    }
    // Gone between the look and the read (a DELETE, retention): still a clean 404.
    const body = await fromStore(recording.stream(part));
    if (!body) throw noRecording();
    return {
      status: part.partial ? 206 : 200,
      body: null,
      stream: { contentType: 'audio/wav', body },
      headers: partHeaders(part, recording.size),
    };
  },
});

const remove = defineRoute({
  method: 'DELETE',
  path: '/calls/:call_id/recording',
  operationId: 'deleteCallRecording',
  summary: "Deletes the call's recording; the call's has_recording is false from then on.",
  scope: 'calls:write',
  params: callParams,
  responses: {
    200: {
      description: 'The recording is gone.',
      schema: {
        type: 'object',
        required: ['object', 'call_id', 'deleted'],
        additionalProperties: false,
        properties: {
          object: { const: 'recording' },
          call_id: uuidSchema,
          deleted: { const: true },
        },
      },
    },
    404: missing,
    503: storeDown,
  },
  async handler(ctx, { params }) {
    const { em, auth, deps } = ctx.state;
    const call = await findCallOr404(em, auth.workspaceId, params.call_id);
    if (!(await fromStore(recordingStoreFor(deps.settings).delete(call.id)))) throw noRecording();
    return { status: 200, body: { object: 'recording', call_id: call.id, deleted: true } };
  },
});

export const callRecordingRoutes: RouteDefinition[] = [get, remove];
