import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPhoneNumber } from '../lib/accounts.js';
import {
  closeApiAndDatabase,
  createFixture,
  type Fixture,
  startApiOnFreshDatabase,
  type TestApi,
} from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import type { TestDatabase } from './support/database.js';

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
before(async () => {
  ({ db, api, owner } = await startApiOnFreshDatabase());
});
after(() => closeApiAndDatabase(api, db));

const client = () => api.client(owner.secret);
let serial = 3_000_000;
const newNumber = (label?: string) =>
  createPhoneNumber(db.orm.em.fork(), { workspaceId: owner.workspaceId, number: `+47${serial++}`, label });

test('a number as the spec shows it', async () => {
  const n = await newNumber('Front desk');
  const res = await client().get(`/phone-numbers/${n.id}`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    object: 'phone_number',
    id: n.id,
    number: n.number,
    label: 'Front desk',
    agent_id: null,
    status: 'active',
    capabilities: ['voice'],
    created_at: n.createdAt.toISOString(),
  });
});

test('with CARRIER=sip a voice number says it is reached over SIP: `sip` in its capabilities, in lists too', async () => {
  const voice = await newNumber('SIP line');
  const media = api.deps.settings.media;
  const before = media.carrier;
  (media as { carrier: typeof before }).carrier = 'sip';
  try {
    const one = await client().get(`/phone-numbers/${voice.id}`);
    assert.deepEqual(one.body.capabilities, ['voice', 'sip']);
    const page = await client().get('/phone-numbers?limit=100');
    for (const item of page.body.data) assert.deepEqual(item.capabilities, ['voice', 'sip']);
  } finally {
    (media as { carrier: typeof before }).carrier = before;
  }
  assert.deepEqual((await client().get(`/phone-numbers/${voice.id}`)).body.capabilities, ['voice']);
});

test('assign, reassign and release', async () => {
  const n = await newNumber();
  const a1 = (await client().post('/agents', { name: 'one' })).body.id;
  const a2 = (await client().post('/agents', { name: 'two' })).body.id;
  assert.equal((await client().patch(`/phone-numbers/${n.id}`, { agent_id: a1 })).body.agent_id, a1);
  assert.equal((await client().patch(`/phone-numbers/${n.id}`, { agent_id: a2 })).body.agent_id, a2);
  assert.equal((await client().get(`/phone-numbers/${n.id}`)).body.agent_id, a2);
  assert.equal((await client().patch(`/phone-numbers/${n.id}`, { agent_id: null })).body.agent_id, null);
  assert.equal((await client().get(`/phone-numbers/${n.id}`)).body.agent_id, null);
});

test('PATCH refusals name their field', async () => {
  const n = await newNumber();
  assertApiError(
    await client().patch(`/phone-numbers/${n.id}`, { label: 'x' }),
    400,
    'parameter_unknown',
    'label',
  );
  assertApiError(await client().patch(`/phone-numbers/${n.id}`, {}), 400, 'body_empty');
  assertApiError(
    await client().patch(`/phone-numbers/${n.id}`, { agent_id: 'nope' }),
    400,
    'parameter_invalid',
    'agent_id',
  );
  assertApiError(
    await client().patch(`/phone-numbers/${n.id}`, { agent_id: 7 }),
    400,
    'parameter_invalid',
    'agent_id',
  );
  assertApiError(
    await client().patch(`/phone-numbers/${n.id}`, { agent_id: crypto.randomUUID() }),
    404,
    'resource_missing',
    'agent_id',
  );
  assertApiError(
    await client().patch('/phone-numbers/123', { agent_id: null }),
    400,
    'parameter_invalid',
    'phone_number_id',
  );
  assertApiError(
    await client().patch(`/phone-numbers/${crypto.randomUUID()}`, { agent_id: null }),
    404,
    'resource_missing',
    'phone_number_id',
  );
});

test('the list pages newest first', async () => {
  const f = await createFixture(db.orm);
  const made: string[] = [];
  for (let i = 0; i < 5; i++) {
    made.push(
      (await createPhoneNumber(db.orm.em.fork(), { workspaceId: f.workspaceId, number: `+47${serial++}` }))
        .id,
    );
  }
  const c = api.client(f.secret);
  const first = await c.get('/phone-numbers?limit=2');
  const second = await c.get(`/phone-numbers?limit=2&cursor=${first.body.next_cursor}`);
  const third = await c.get(`/phone-numbers?limit=2&cursor=${second.body.next_cursor}`);
  const ids = [first, second, third].flatMap((r) => r.body.data.map((n: { id: string }) => n.id));
  assert.deepEqual(ids, made.reverse());
  assert.equal(third.body.has_more, false);
  assertApiError(await c.get('/phone-numbers?limit=101'), 400, 'parameter_invalid', 'limit');
  assertApiError(await c.get('/phone-numbers?agent_id=x'), 400, 'parameter_unknown', 'agent_id');
});
