import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTES } from '../../lib/temporal/search-attributes.js';

/** The time-skipping server starts without custom search attributes; call workflows need ours. */
export async function registerSearchAttributes(env: TestWorkflowEnvironment): Promise<void> {
  const keyword = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((name) => [name, keyword])),
  });
}
