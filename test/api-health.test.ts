import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CallStack, startCallStack } from './support/call-stack.js';
import { type DatabaseOutage, databaseOutage } from './support/database-outage.js';
import { scrape } from './support/prometheus-scrape.js';

// The API's liveness and readiness (api/health.ts) over real HTTP, on a real PostgreSQL and
// Temporal with the workers polling: /readyz goes unready while PostgreSQL refuses connections and
// ready again after, without a restart; /healthz stays 200 throughout. No key, never cached.

let stack: CallStack;
let outage: DatabaseOutage;

before(async () => {
  stack = await startCallStack({ prefix: 'api-health', webhooks: true });
  outage = await databaseOutage(stack.db);
});

after(async () => {
  await outage?.close();
  await stack?.close();
});

const origin = () => stack.api.url.replace(/\/v1$/, '');

async function get(path: string) {
  const response = await fetch(`${origin()}${path}`);
  return {
    status: response.status,
    cache: response.headers.get('cache-control'),
    body: await response.json(),
  };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.fail(what);
}

describe('health endpoints', { timeout: 120_000 }, () => {
  test('/healthz and /readyz answer without a key; ready when the database, Temporal and the workers are', async () => {
    const live = await get('/healthz');
    assert.deepEqual([live.status, live.body], [200, { status: 'ok' }]);
    assert.equal(live.cache, 'no-store');
    // The workers' pollers reach the server a moment after they start.
    await until(async () => (await get('/readyz')).status === 200, 'ready');
    const ready = await get('/readyz');
    assert.deepEqual(ready.body, {
      status: 'ready',
      checks: { database: 'ok', temporal: 'ok', workers: 'ok' },
    });
    assert.equal(ready.cache, 'no-store');
  });

  test('/readyz is 503 while PostgreSQL refuses connections and 200 again after; /healthz stays 200; database_up says it', async () => {
    assert.equal((await scrape(`${origin()}/metrics`)).value('database_up'), 1);
    await outage.begin();
    try {
      // The metrics still answer, at once, with the database down.
      const scraped = await scrape(`${origin()}/metrics`);
      assert.equal(scraped.value('database_up'), 0);
      assert.equal(scraped.types.get('calls_live'), 'gauge');
      const during = await get('/readyz');
      assert.equal(during.status, 503);
      assert.deepEqual(during.body, {
        status: 'not_ready',
        checks: { database: 'unavailable', temporal: 'ok', workers: 'ok' },
      });
      assert.equal((await get('/healthz')).status, 200);
    } finally {
      await outage.end();
    }
    await until(async () => (await get('/readyz')).status === 200, 'ready again after the outage');
    assert.equal((await scrape(`${origin()}/metrics`)).value('database_up'), 1);
  });
});
