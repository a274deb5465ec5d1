import type { OpenApiLink } from './route.js';

// OpenAPI links from an operation that returns a resource to the operations that take its id,
// each named after its target operation.

/** `$response.body#/id` into `parameter` of each operation; `more` adds fixed expressions. */
export function linksTakingId(
  parameter: string,
  operationIds: string[],
  more: Record<string, string> = {},
): Record<string, OpenApiLink> {
  return Object.fromEntries(
    operationIds.map((operationId) => [
      operationId,
      { operationId, parameters: { ...more, [parameter]: '$response.body#/id' } },
    ]),
  );
}
