import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, Call } from '../db/entities/index.js';
import { createPhoneNumber, setLimits } from '../lib/accounts.js';
import {
  type ApiResponse,
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
const createAgent = async (body: Record<string, unknown> = {}) => {
  const res = await client().post('/agents', { name: 'Support', ...body });
  assert.equal(res.status, 201, res.text);
  return res.body;
};

describe('POST /agents', () => {
  test('creates a draft with defaults', async () => {
    const res = await client().post('/agents', { name: 'Reception' });
    assert.equal(res.status, 201);
    const agent = res.body;
    assert.match(agent.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...agent, id: undefined, created_at: undefined, updated_at: undefined },
      {
        object: 'agent',
        id: undefined,
        name: 'Reception',
        description: null,
        status: 'draft',
        language: 'nb-NO',
        system_prompt: null,
        first_message: null,
        outbound_first_message: null,
        voice: { provider: 'simulator', voice_id: null },
        llm: { provider: 'simulator', model: 'scripted-conversation-v1' },
        tools: [],
        transfer_destinations: [],
        analysis_plan: null,
        voicemail: { detect: true, action: 'hang_up', message: null },
        keypad: { send: false },
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.ok(!Number.isNaN(Date.parse(agent.created_at)));
    const read = await client().get(`/agents/${agent.id}`);
    assert.deepEqual(read.body, agent);
  });

  test('every field is stored', async () => {
    const agent = await createAgent({
      name: 'Sales',
      description: 'd',
      language: 'en-US',
      system_prompt: 'Be kind.',
      first_message: 'Hi',
      outbound_first_message: 'Hello, this is Sales',
      voice_id: 'voice-1',
    });
    assert.equal(agent.description, 'd');
    assert.equal(agent.language, 'en-US');
    assert.equal(agent.system_prompt, 'Be kind.');
    assert.equal(agent.first_message, 'Hi');
    assert.equal(agent.outbound_first_message, 'Hello, this is Sales');
    assert.deepEqual(agent.voice, { provider: 'simulator', voice_id: 'voice-1' });
  });

  const bounds: [string, number][] = [
    ['name', 200],
    ['description', 1000],
    ['system_prompt', 50_000],
    ['first_message', 500],
    ['outbound_first_message', 500],
    ['voice_id', 200],
  ];
  for (const [field, max] of bounds) {
    test(`${field}: ${max} characters pass, ${max + 1} are parameter_invalid`, async () => {
      // Multi-byte characters: the bound counts characters, not bytes.
      const ok = await client().post('/agents', { name: 'n', [field]: 'å'.repeat(max) });
      assert.equal(ok.status, 201, ok.text);
      assert.equal(
        ok.body[field === 'voice_id' ? 'voice' : field]?.voice_id ?? ok.body[field],
        'å'.repeat(max),
      );
      const tooLong = await client().post('/agents', { name: 'n', [field]: 'å'.repeat(max + 1) });
      assertApiError(tooLong, 400, 'parameter_invalid', field);
    });
  }

  test('a 50,000-character system prompt of 4-byte characters, JSON-escaped, fits the body limit', async () => {
    const prompt = '😀'.repeat(50_000);
    const raw = JSON.stringify({ name: 'big', system_prompt: prompt }).replace(
      /[\u{10000}-\u{10FFFF}]/gu,
      (c) => `\\u${c.charCodeAt(0).toString(16)}\\u${c.charCodeAt(1).toString(16)}`,
    );
    assert.ok(raw.length > 600_000);
    const res = await client().request('POST', '/agents', {
      raw,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 201, res.text.slice(0, 300));
    assert.equal(res.body.system_prompt, prompt);
  });

  test('language: well-formed BCP 47 tags pass, others are parameter_invalid', async () => {
    for (const tag of [
      'nb-NO',
      'en',
      'zh-Hant-TW',
      'de-CH-1996',
      'sr-Latn-RS',
      'es-419',
      'en-US-x-twain',
      'i-klingon',
    ]) {
      const res = await client().post('/agents', { name: 'n', language: tag });
      assert.equal(res.status, 201, `${tag}: ${res.text}`);
      assert.equal(res.body.language, tag);
    }
    for (const tag of ['english', 'nb_NO', 'en-', '', 'a-b', 'en-US-US', '123', 'de-1996-1996', 'x']) {
      assertApiError(
        await client().post('/agents', { name: 'n', language: tag }),
        400,
        'parameter_invalid',
        'language',
      );
    }
    const at20 = 'en-US-x-abcd-efghijk';
    assert.equal(at20.length, 20);
    assert.equal((await client().post('/agents', { name: 'n', language: at20 })).status, 201);
    const at21 = 'en-US-x-abcd-efghijkl';
    assertApiError(
      await client().post('/agents', { name: 'n', language: at21 }),
      400,
      'parameter_invalid',
      'language',
    );
  });

  test('name is required and not empty', async () => {
    assertApiError(await client().post('/agents', {}), 400, 'parameter_missing', 'name');
    assertApiError(await client().post('/agents', { description: 'x' }), 400, 'parameter_missing', 'name');
    assertApiError(await client().post('/agents', { name: '' }), 400, 'parameter_invalid', 'name');
    assertApiError(await client().post('/agents', { name: 5 }), 400, 'parameter_invalid', 'name');
    assertApiError(await client().post('/agents', { name: null }), 400, 'parameter_invalid', 'name');
  });

  test('unknown fields are parameter_unknown, including read-only llm and status', async () => {
    assertApiError(
      await client().post('/agents', { name: 'n', colour: 'red' }),
      400,
      'parameter_unknown',
      'colour',
    );
    assertApiError(
      await client().post('/agents', { name: 'n', llm: { model: 'x' } }),
      400,
      'parameter_unknown',
      'llm',
    );
    assertApiError(
      await client().post('/agents', { name: 'n', status: 'published' }),
      400,
      'parameter_unknown',
      'status',
    );
  });

  test('text PostgreSQL cannot store as sent is parameter_invalid, never a 500', async () => {
    // NUL: text columns refuse it. An unpaired surrogate: the driver would store U+FFFD instead.
    assertApiError(await client().post('/agents', { name: 'a\u0000b' }), 400, 'parameter_invalid', 'name');
    const loneSurrogate = await client().request('POST', '/agents', {
      raw: '{"name":"n","system_prompt":"\\ud800 help"}',
      headers: { 'content-type': 'application/json' },
    });
    assertApiError(loneSurrogate, 400, 'parameter_invalid', 'system_prompt');
    const agent = await createAgent();
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { description: '\u0000' }),
      400,
      'parameter_invalid',
      'description',
    );
    // Paired surrogates (an emoji) are ordinary text.
    assert.equal((await client().post('/agents', { name: '😀 \ud83d\ude00' })).status, 201);
  });

  test('null is refused on create fields', async () => {
    assertApiError(
      await client().post('/agents', { name: 'n', description: null }),
      400,
      'parameter_invalid',
      'description',
    );
  });
});

describe('GET /agents', () => {
  test('pages newest first over more than two pages, without gaps or repeats', async () => {
    const f = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const c = api.client(f.secret);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await c.post('/agents', { name: `a${i}` })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: ApiResponse = await c.get(
        `/agents?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.object, 'list');
      pages++;
      seen.push(...res.body.data.map((a: { id: string }) => a.id));
      assert.equal(res.body.has_more, res.body.next_cursor !== null);
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, created.reverse());
  });

  test('ties on created_at are broken by id', async () => {
    const f = await createFixture(db.orm);
    const em = db.orm.em.fork();
    const at = new Date('2026-01-01T00:00:00.000Z');
    await em.getConnection().execute(
      `insert into agents (id, workspace_id, name, status, tools, created_at, updated_at)
       select gen_random_uuid(), ?, 'same', 'draft', '[]', ?, ? from generate_series(1, 5)`,
      [f.workspaceId, at, at],
    );
    const c = api.client(f.secret);
    const first = await c.get('/agents?limit=2');
    const second = await c.get(`/agents?limit=2&cursor=${first.body.next_cursor}`);
    const third = await c.get(`/agents?limit=2&cursor=${second.body.next_cursor}`);
    const ids = [...first.body.data, ...second.body.data, ...third.body.data].map(
      (a: { id: string }) => a.id,
    );
    assert.equal(new Set(ids).size, 5);
    assert.deepEqual(ids, [...ids].sort().reverse());
    assert.equal(third.body.has_more, false);
    assert.equal(third.body.next_cursor, null);
  });

  test('limit: default 20, 1 and 100 pass, 0, 101, text and repeats are parameter_invalid', async () => {
    const f = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const c = api.client(f.secret);
    for (let i = 0; i < 21; i++) await c.post('/agents', { name: `a${i}` });
    assert.equal((await c.get('/agents')).body.data.length, 20);
    assert.equal((await c.get('/agents?limit=1')).body.data.length, 1);
    assert.equal((await c.get('/agents?limit=100')).body.data.length, 21);
    assert.equal((await c.get('/agents?limit=05')).body.data.length, 5);
    // Only decimal digits: ajv alone would read 0x10 as 16 and 1e1 as 10.
    for (const bad of ['0', '101', 'ten', '1.5', '-1', '', '0x10', '1e1', '%205', '%2B5', '5%20']) {
      assertApiError(await c.get(`/agents?limit=${bad}`), 400, 'parameter_invalid', 'limit');
    }
    assertApiError(await c.get('/agents?limit=1&limit=2'), 400, 'parameter_invalid', 'limit');
  });

  test('a cursor that was not issued is parameter_invalid; unknown query is parameter_unknown', async () => {
    assertApiError(await client().get('/agents?cursor=nonsense'), 400, 'parameter_invalid', 'cursor');
    assertApiError(await client().get('/agents?cursor='), 400, 'parameter_invalid', 'cursor');
    // Well-formed JSON in the cursor's encoding, naming a position no row can have: refused, never
    // passed on to SQL (where it used to fail as a 500).
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const position of [
      [9e15, crypto.randomUUID()], // past the Date range
      [-62198755200000, crypto.randomUUID()], // year -1, before PostgreSQL's range
      [Date.now(), '-'.repeat(36)],
      [Date.now(), `urn:uuid:${crypto.randomUUID()}`],
      [Date.now()],
      { at: Date.now(), id: crypto.randomUUID() },
    ]) {
      assertApiError(
        await client().get(`/agents?cursor=${forged(position)}`),
        400,
        'parameter_invalid',
        'cursor',
      );
    }
    assertApiError(await client().get('/agents?sort=asc'), 400, 'parameter_unknown', 'sort');
    assertApiError(
      await client().get('/agents/00000000-0000-4000-8000-000000000000?x=1'),
      400,
      'parameter_unknown',
      'x',
    );
  });
});

describe('PATCH /agents/{agent_id}', () => {
  test('only sent fields change; null clears the nullable ones', async () => {
    const agent = await createAgent({
      description: 'd',
      first_message: 'f',
      outbound_first_message: 'o',
      system_prompt: 's',
    });
    const res = await client().patch(`/agents/${agent.id}`, {
      name: 'Renamed',
      outbound_first_message: null,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Renamed');
    assert.equal(res.body.outbound_first_message, null);
    assert.equal(res.body.description, 'd');
    assert.equal(res.body.first_message, 'f');
    const cleared = await client().patch(`/agents/${agent.id}`, { description: null, first_message: null });
    assert.equal(cleared.body.description, null);
    assert.equal(cleared.body.first_message, null);
    assert.ok(Date.parse(cleared.body.updated_at) >= Date.parse(agent.updated_at));
    assert.deepEqual((await client().get(`/agents/${agent.id}`)).body, cleared.body);
  });

  test('null where the spec does not allow it is parameter_invalid', async () => {
    const agent = await createAgent();
    for (const field of ['name', 'language', 'system_prompt', 'voice_id']) {
      assertApiError(
        await client().patch(`/agents/${agent.id}`, { [field]: null }),
        400,
        'parameter_invalid',
        field,
      );
    }
  });

  test('bounds apply to PATCH too', async () => {
    const agent = await createAgent();
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { first_message: 'x'.repeat(501) }),
      400,
      'parameter_invalid',
      'first_message',
    );
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { language: 'no way' }),
      400,
      'parameter_invalid',
      'language',
    );
    assert.equal(
      (await client().patch(`/agents/${agent.id}`, { first_message: 'x'.repeat(500) })).status,
      200,
    );
  });

  test('a body of unknown fields only is parameter_unknown, not body_empty; nothing changes', async () => {
    const agent = await createAgent();
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { colour: 'red' }),
      400,
      'parameter_unknown',
      'colour',
    );
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { llm: { model: 'x' } }),
      400,
      'parameter_unknown',
      'llm',
    );
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { name: 'Kept?', status: 'published' }),
      400,
      'parameter_unknown',
      'status',
    );
    assert.deepEqual((await client().get(`/agents/${agent.id}`)).body, agent);
  });

  test('an empty body is body_empty', async () => {
    const agent = await createAgent();
    assertApiError(await client().patch(`/agents/${agent.id}`, {}), 400, 'body_empty');
    const raw = await client().request('PATCH', `/agents/${agent.id}`, { raw: '' });
    assertApiError(raw, 400, 'body_empty');
  });

  test('a published agent keeps a system prompt', async () => {
    const agent = await createAgent({ system_prompt: 'Help.' });
    await client().post(`/agents/${agent.id}/publish`);
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { system_prompt: '  ' }),
      422,
      'agent_not_ready',
      'system_prompt',
    );
    const res = await client().patch(`/agents/${agent.id}`, { system_prompt: 'Help more.' });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'published');
  });
});

describe('publish and unpublish', () => {
  test('draft → published → unpublished → published', async () => {
    const agent = await createAgent({ system_prompt: 'Help callers.' });
    const published = await client().post(`/agents/${agent.id}/publish`);
    assert.equal(published.status, 200);
    assert.equal(published.body.status, 'published');
    const again = await client().post(`/agents/${agent.id}/publish`);
    assert.equal(again.body.status, 'published');
    const unpublished = await client().post(`/agents/${agent.id}/unpublish`);
    assert.equal(unpublished.body.status, 'unpublished');
    assert.equal(unpublished.body.system_prompt, 'Help callers.');
    assert.equal((await client().post(`/agents/${agent.id}/unpublish`)).body.status, 'unpublished');
    assert.equal((await client().post(`/agents/${agent.id}/publish`)).body.status, 'published');
  });

  test('an agent without a system prompt is not ready to publish', async () => {
    const agent = await createAgent();
    assertApiError(
      await client().post(`/agents/${agent.id}/publish`),
      422,
      'agent_not_ready',
      'system_prompt',
    );
    const blank = await createAgent({ system_prompt: ' \n ' });
    assertApiError(
      await client().post(`/agents/${blank.id}/publish`),
      422,
      'agent_not_ready',
      'system_prompt',
    );
    assert.equal((await client().get(`/agents/${agent.id}`)).body.status, 'draft');
  });

  test('unpublishing an agent that is not published answers 200 and changes nothing (the spec lists no 422)', async () => {
    const agent = await createAgent({ system_prompt: 's' });
    const res = await client().post(`/agents/${agent.id}/unpublish`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, agent);
  });

  test('an archived agent cannot be published; unpublishing it changes nothing', async () => {
    const agent = await createAgent({ system_prompt: 's' });
    await db.orm.em
      .fork()
      .getConnection()
      .execute(`update agents set status = 'archived' where id = ?`, [agent.id]);
    assertApiError(await client().post(`/agents/${agent.id}/publish`), 422, 'agent_not_ready');
    const res = await client().post(`/agents/${agent.id}/unpublish`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'archived');
    assert.equal(res.body.updated_at, agent.updated_at);
  });

  test('publish and unpublish of a deleted agent are 404', async () => {
    const agent = await createAgent({ system_prompt: 's' });
    assert.equal((await client().delete(`/agents/${agent.id}`)).status, 200);
    assertApiError(await client().post(`/agents/${agent.id}/publish`), 404, 'resource_missing', 'agent_id');
    assertApiError(await client().post(`/agents/${agent.id}/unpublish`), 404, 'resource_missing', 'agent_id');
  });

  test('publish takes no body fields', async () => {
    const agent = await createAgent({ system_prompt: 's' });
    assertApiError(
      await client().post(`/agents/${agent.id}/publish`, { force: true }),
      400,
      'parameter_unknown',
      'force',
    );
  });
});

describe('DELETE /agents/{agent_id}', () => {
  test('releases its numbers, keeps its calls, and is gone from reads', async () => {
    const agent = await createAgent({ system_prompt: 's' });
    const em = db.orm.em.fork();
    const number = await createPhoneNumber(em, { workspaceId: owner.workspaceId, number: '+4790000001' });
    assert.equal(
      (await client().patch(`/phone-numbers/${number.id}`, { agent_id: agent.id })).body.agent_id,
      agent.id,
    );
    const call = em.create(Call, {
      id: crypto.randomUUID(),
      workspace: owner.workspaceId,
      agent: agent.id,
      direction: 'outbound',
      channel: 'phone',
      status: 'completed',
      startedAt: new Date(),
      metadata: {},
      agentSnapshot: {
        name: 'Support',
        language: null,
        systemPrompt: 's',
        firstMessage: null,
        outboundFirstMessage: null,
        voiceProvider: null,
        voiceId: null,
        llmProvider: null,
        llmModel: null,
      },
    } as never);
    await em.flush();

    const res = await client().delete(`/agents/${agent.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { object: 'agent', id: agent.id, deleted: true });

    assertApiError(await client().get(`/agents/${agent.id}`), 404, 'resource_missing', 'agent_id');
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { name: 'x' }),
      404,
      'resource_missing',
      'agent_id',
    );
    assertApiError(await client().post(`/agents/${agent.id}/publish`), 404, 'resource_missing', 'agent_id');
    assertApiError(await client().delete(`/agents/${agent.id}`), 404, 'resource_missing', 'agent_id');
    const list = await client().get('/agents?limit=100');
    assert.ok(!list.body.data.some((a: { id: string }) => a.id === agent.id));

    assert.equal((await client().get(`/phone-numbers/${number.id}`)).body.agent_id, null);
    const kept = await db.orm.em.fork().findOneOrFail(Call, { id: call.id });
    assert.equal(kept.agent, agent.id);
    assertApiError(
      await client().patch(`/phone-numbers/${number.id}`, { agent_id: agent.id }),
      404,
      'resource_missing',
      'agent_id',
    );
  });
});

describe('path ids', () => {
  test('a non-UUID id is 400 parameter_invalid', async () => {
    assertApiError(await client().get('/agents/not-a-uuid'), 400, 'parameter_invalid', 'agent_id');
    assertApiError(await client().patch('/agents/123', { name: 'x' }), 400, 'parameter_invalid', 'agent_id');
    assertApiError(await client().delete('/agents/123'), 400, 'parameter_invalid', 'agent_id');
    assertApiError(await client().post('/agents/123/publish'), 400, 'parameter_invalid', 'agent_id');
  });

  test('an unknown UUID is 404 resource_missing', async () => {
    assertApiError(await client().get(`/agents/${crypto.randomUUID()}`), 404, 'resource_missing', 'agent_id');
  });

  test('a UUID with a urn:uuid: prefix is not a UUID here (it used to reach SQL and fail as a 500)', async () => {
    const agent = await createAgent();
    const urn = `urn:uuid:${agent.id}`;
    assertApiError(await client().get(`/agents/${urn}`), 400, 'parameter_invalid', 'agent_id');
    assertApiError(await client().delete(`/agents/${urn}`), 400, 'parameter_invalid', 'agent_id');
    assertApiError(await client().post(`/agents/${urn}/unpublish`), 400, 'parameter_invalid', 'agent_id');
    const number = await createPhoneNumber(db.orm.em.fork(), {
      workspaceId: owner.workspaceId,
      number: '+4790000077',
    });
    assertApiError(
      await client().patch(`/phone-numbers/${number.id}`, { agent_id: urn }),
      400,
      'parameter_invalid',
      'agent_id',
    );
  });

  test('an upper-case UUID names the same agent; answers carry the stored, lower-case id', async () => {
    const agent = await createAgent();
    const upper = agent.id.toUpperCase();
    assert.deepEqual((await client().get(`/agents/${upper}`)).body, agent);
    const deleted = await client().delete(`/agents/${upper}`);
    assert.deepEqual(deleted.body, { object: 'agent', id: agent.id, deleted: true });
  });
});

describe('transfer_destinations', () => {
  const storedDestinations = async (agentId: string) =>
    (await db.orm.em.fork().findOneOrFail(Agent, { id: agentId })).transferDestinations;

  test('written on create (mode defaults to cold, message to null), shown by GET and lists, replaced whole by PATCH', async () => {
    const agent = await createAgent({
      transfer_destinations: [
        { number: '+4722000200', description: 'Billing' },
        {
          number: '+46812345678',
          description: 'Stockholm office',
          mode: 'warm',
          message: 'A customer from Norway.',
        },
      ],
    });
    const expected = [
      { number: '+4722000200', description: 'Billing', mode: 'cold', message: null },
      {
        number: '+46812345678',
        description: 'Stockholm office',
        mode: 'warm',
        message: 'A customer from Norway.',
      },
    ];
    assert.deepEqual(agent.transfer_destinations, expected);
    assert.deepEqual((await client().get(`/agents/${agent.id}`)).body.transfer_destinations, expected);
    const listed = (await client().get('/agents?limit=100')).body.data.find(
      (item: { id: string }) => item.id === agent.id,
    );
    assert.deepEqual(listed.transfer_destinations, expected);

    const patched = await client().patch(`/agents/${agent.id}`, {
      transfer_destinations: [{ number: '+4722000300', description: 'Front desk', mode: 'warm' }],
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.transfer_destinations, [
      { number: '+4722000300', description: 'Front desk', mode: 'warm', message: null },
    ]);
    // Other fields leave them alone; [] removes them all.
    await client().patch(`/agents/${agent.id}`, { name: 'Renamed' });
    assert.equal((await storedDestinations(agent.id)).length, 1);
    const cleared = await client().patch(`/agents/${agent.id}`, { transfer_destinations: [] });
    assert.deepEqual(cleared.body.transfer_destinations, []);
  });

  test('each number passes the dialling check at write time, the refusal naming its field; nothing is written', async () => {
    const agent = await createAgent({
      transfer_destinations: [{ number: '+4722000200', description: 'Billing' }],
    });
    const before = await storedDestinations(agent.id);
    const ok = { number: '+4722000400', description: 'Sales' };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ number: '+4711200000', description: 'Police' }, 422, 'emergency_number'],
      [{ number: '+4782012345', description: 'Premium' }, 422, 'destination_not_allowed'],
      [{ number: '+881612345678', description: 'Satellite' }, 422, 'destination_not_allowed'],
      [{ number: '+447700900123', description: 'London' }, 422, 'destination_not_allowed'],
      [{ number: '22000200', description: 'Not E.164' }, 400, 'parameter_invalid'],
      [{ number: '+4722000500', description: '' }, 400, 'parameter_invalid'],
      [{ number: '+4722000500', description: 'x', mode: 'hot' }, 400, 'parameter_invalid'],
    ];
    for (const [destination, status, code] of cases) {
      const body = {
        transfer_destinations: [ok, ok, destination].map((d, i) =>
          i === 1 ? { ...d, number: '+4722000401' } : d,
        ),
      };
      const param =
        code === 'parameter_invalid' && destination.description === ''
          ? 'transfer_destinations[2].description'
          : code === 'parameter_invalid' && destination.mode
            ? 'transfer_destinations[2].mode'
            : 'transfer_destinations[2].number';
      assertApiError(await client().patch(`/agents/${agent.id}`, body), status, code, param);
      assertApiError(await client().post('/agents', { name: 'Refused', ...body }), status, code, param);
    }
    assert.deepEqual(await storedDestinations(agent.id), before, 'a refused PATCH changes nothing');

    // Listed twice.
    assertApiError(
      await client().patch(`/agents/${agent.id}`, {
        transfer_destinations: [ok, { ...ok, description: 'Again' }],
      }),
      400,
      'parameter_invalid',
      'transfer_destinations[1].number',
    );
    // More than 20.
    const many = Array.from({ length: 21 }, (_, i) => ({
      number: `+47220006${String(i).padStart(2, '0')}`,
      description: 'x',
    }));
    assertApiError(
      await client().patch(`/agents/${agent.id}`, { transfer_destinations: many }),
      400,
      'parameter_invalid',
      'transfer_destinations',
    );
    assert.equal(
      (await client().patch(`/agents/${agent.id}`, { transfer_destinations: many.slice(0, 20) })).status,
      200,
    );
  });

  test('description over 200 and message over 500 characters are parameter_invalid at their field; nothing is written', async () => {
    const agent = await createAgent({
      name: 'Bounds',
      transfer_destinations: [{ number: '+4722000200', description: 'Billing' }],
    });
    const before = await storedDestinations(agent.id);
    const ok = { number: '+4722000400', description: 'Sales' };
    const cases: [Record<string, unknown>, string][] = [
      [{ number: '+4722000500', description: 'd'.repeat(201) }, 'transfer_destinations[1].description'],
      [
        { number: '+4722000500', description: 'Desk', mode: 'warm', message: 'm'.repeat(501) },
        'transfer_destinations[1].message',
      ],
    ];
    for (const [destination, param] of cases) {
      const body = { transfer_destinations: [ok, destination] };
      assertApiError(await client().patch(`/agents/${agent.id}`, body), 400, 'parameter_invalid', param);
      assertApiError(
        await client().post('/agents', { name: 'Too long', ...body }),
        400,
        'parameter_invalid',
        param,
      );
    }
    assert.deepEqual(await storedDestinations(agent.id), before, 'a refused PATCH changes nothing');
    assert.equal(
      await db.orm.em.fork().count(Agent, { name: 'Too long' }),
      0,
      'a refused POST makes no agent',
    );
    // At the bounds, both pass.
    const longest = { number: '+4722000500', description: 'd'.repeat(200), message: 'm'.repeat(500) };
    const patched = await client().patch(`/agents/${agent.id}`, { transfer_destinations: [longest] });
    assert.equal(patched.status, 200, patched.text);
  });

  test('the workspace’s dialing countries as they are now, and never one of the agent’s own numbers', async () => {
    const agent = await createAgent({ name: 'Countries' });
    const em = db.orm.em.fork();
    const own = await createPhoneNumber(em, { workspaceId: owner.workspaceId, number: '+4722000999' });
    await client().patch(`/phone-numbers/${own.id}`, { agent_id: agent.id });
    assertApiError(
      await client().patch(`/agents/${agent.id}`, {
        transfer_destinations: [{ number: '+4722000999', description: 'Itself' }],
      }),
      422,
      'destination_not_allowed',
      'transfer_destinations[0].number',
    );
    const london = { transfer_destinations: [{ number: '+447700900123', description: 'London' }] };
    try {
      await setLimits(db.orm.em.fork(), { workspaceId: owner.workspaceId, dialingCountries: 'GB' });
      assert.equal((await client().patch(`/agents/${agent.id}`, london)).status, 200);
      const norway = await client().patch(`/agents/${agent.id}`, {
        transfer_destinations: [{ number: '+4722000200', description: 'Oslo' }],
      });
      assertApiError(norway, 422, 'destination_not_allowed', 'transfer_destinations[0].number');
      assert.match(norway.body.error.message, /NO/);
    } finally {
      await setLimits(db.orm.em.fork(), { workspaceId: owner.workspaceId, dialingCountries: 'default' });
    }
  });
});

describe('analysis_plan', () => {
  const storedPlan = async (agentId: string) =>
    (await db.orm.em.fork().findOneOrFail(Agent, { id: agentId })).analysisPlan;
  const dataSchema = {
    type: 'object',
    additionalProperties: false,
    required: ['callback_number', 'wants_visit'],
    properties: {
      callback_number: { type: ['string', 'null'], description: 'E.164' },
      wants_visit: { type: 'boolean' },
    },
  };

  test('written on create, shown by GET and lists, replaced whole by PATCH, null removes it', async () => {
    const plan = { data_schema: dataSchema, success_criteria: 'A visit was booked.' };
    const agent = await createAgent({ analysis_plan: plan });
    assert.deepEqual(agent.analysis_plan, plan);
    assert.deepEqual((await client().get(`/agents/${agent.id}`)).body.analysis_plan, plan);
    const listed = (await client().get('/agents?limit=100')).body.data.find(
      (item: { id: string }) => item.id === agent.id,
    );
    assert.deepEqual(listed.analysis_plan, plan);

    // A field left out is null: the plan is replaced whole.
    const patched = await client().patch(`/agents/${agent.id}`, {
      analysis_plan: { success_criteria: 'The caller left a callback number.' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.analysis_plan, {
      data_schema: null,
      success_criteria: 'The caller left a callback number.',
    });
    await client().patch(`/agents/${agent.id}`, { name: 'Renamed' });
    assert.equal((await storedPlan(agent.id))?.successCriteria, 'The caller left a callback number.');
    const cleared = await client().patch(`/agents/${agent.id}`, { analysis_plan: null });
    assert.equal(cleared.body.analysis_plan, null);
    assert.equal(await storedPlan(agent.id), null);
  });

  test('data_schema follows a tool’s parameters rules, success_criteria its bounds: each refusal names its field, nothing is written', async () => {
    const plan = { data_schema: dataSchema, success_criteria: 'Booked.' };
    const agent = await createAgent({ analysis_plan: plan });
    let deep: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < 70; i++) deep = { type: 'object', properties: { inner: deep } };
    const cases: [unknown, string, string, string?][] = [
      [{ data_schema: { type: 'string' } }, 'analysis_plan.data_schema', /object schema/.source],
      [{ data_schema: { type: 'array', items: {} } }, 'analysis_plan.data_schema', /object schema/.source],
      [
        { data_schema: { type: 'object', properties: { a: { type: 'nonsense' } } } },
        'analysis_plan.data_schema',
        /valid JSON Schema/.source,
      ],
      [
        { data_schema: { type: 'object', description: 'x'.repeat(17_000) } },
        'analysis_plan.data_schema',
        /16 KiB/.source,
      ],
      [{ data_schema: deep }, 'analysis_plan.data_schema', /64 levels/.source],
      [{ data_schema: 'a schema' }, 'analysis_plan.data_schema', ''],
      [{ success_criteria: 'x'.repeat(2001) }, 'analysis_plan.success_criteria', ''],
      [{ success_criteria: 'ok', extra: 1 }, 'analysis_plan.extra', '', 'parameter_unknown'],
      ['booked', 'analysis_plan', ''],
    ];
    for (const [analysisPlan, param, message, code = 'parameter_invalid'] of cases) {
      const patched = await client().patch(`/agents/${agent.id}`, { analysis_plan: analysisPlan });
      assertApiError(patched, 400, code, param);
      assert.match(patched.body.error.message, new RegExp(message));
      const before = (await client().get('/agents?limit=100')).body.data.length;
      assertApiError(
        await client().post('/agents', { name: 'Refused', analysis_plan: analysisPlan }),
        400,
        code,
        param,
      );
      assert.equal((await client().get('/agents?limit=100')).body.data.length, before, 'no agent was made');
    }
    assert.deepEqual(await storedPlan(agent.id), {
      dataSchema,
      successCriteria: 'Booked.',
    });
    // Exactly at the bounds: accepted.
    const atBounds = await client().patch(`/agents/${agent.id}`, {
      analysis_plan: { data_schema: { type: 'object' }, success_criteria: 'x'.repeat(2000) },
    });
    assert.equal(atBounds.status, 200, atBounds.text);
    // The spec bounds success_criteria at 2000 only: an empty one is kept, and asks for no verdict.
    const empty = await client().patch(`/agents/${agent.id}`, {
      analysis_plan: { data_schema: null, success_criteria: '' },
    });
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body.analysis_plan, { data_schema: null, success_criteria: '' });
  });
});

describe('voicemail and keypad', () => {
  const stored = async (agentId: string) => {
    const agent = await db.orm.em.fork().findOneOrFail(Agent, { id: agentId });
    return { voicemail: agent.voicemail, keypad: agent.keypad };
  };

  test('written on create, shown by GET and lists, replaced whole by PATCH (a key left out takes its default)', async () => {
    const voicemail = {
      detect: true,
      action: 'leave_message',
      message: 'Hi {{name}}, call us back at 22 33 44 55.',
    };
    const agent = await createAgent({ voicemail, keypad: { send: true } });
    assert.deepEqual(agent.voicemail, voicemail);
    assert.deepEqual(agent.keypad, { send: true });
    assert.deepEqual((await client().get(`/agents/${agent.id}`)).body.voicemail, voicemail);
    const listed = (await client().get('/agents?limit=100')).body.data.find(
      (item: { id: string }) => item.id === agent.id,
    );
    assert.deepEqual([listed.voicemail, listed.keypad], [voicemail, { send: true }]);

    const patched = await client().patch(`/agents/${agent.id}`, { voicemail: { detect: false }, keypad: {} });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.voicemail, { detect: false, action: 'hang_up', message: null });
    assert.deepEqual(patched.body.keypad, { send: false });
    await client().patch(`/agents/${agent.id}`, { name: 'Renamed' });
    assert.deepEqual(await stored(agent.id), {
      voicemail: { detect: false, action: 'hang_up', message: null },
      keypad: { send: false },
    });
  });

  test('leave_message without a message, bad values and unknown keys: each names its field, nothing is written', async () => {
    const agent = await createAgent({ keypad: { send: true } });
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ voicemail: { action: 'leave_message' } }, 400, 'parameter_missing', 'voicemail.message'],
      [
        { voicemail: { action: 'leave_message', message: null } },
        400,
        'parameter_missing',
        'voicemail.message',
      ],
      [
        { voicemail: { action: 'leave_message', message: '' } },
        400,
        'parameter_invalid',
        'voicemail.message',
      ],
      [{ voicemail: { message: 'x'.repeat(1001) } }, 400, 'parameter_invalid', 'voicemail.message'],
      [{ voicemail: { action: 'record' } }, 400, 'parameter_invalid', 'voicemail.action'],
      [{ voicemail: { detect: 'yes' } }, 400, 'parameter_invalid', 'voicemail.detect'],
      [{ voicemail: { detect: true, beep: true } }, 400, 'parameter_unknown', 'voicemail.beep'],
      [{ voicemail: null }, 400, 'parameter_invalid', 'voicemail'],
      [{ keypad: { send: 1 } }, 400, 'parameter_invalid', 'keypad.send'],
      [{ keypad: { receive: true } }, 400, 'parameter_unknown', 'keypad.receive'],
    ];
    for (const [body, status, code, param] of cases) {
      assertApiError(await client().patch(`/agents/${agent.id}`, body), status, code, param);
      const before = (await client().get('/agents?limit=100')).body.data.length;
      assertApiError(await client().post('/agents', { name: 'Refused', ...body }), status, code, param);
      assert.equal((await client().get('/agents?limit=100')).body.data.length, before, 'no agent was made');
    }
    assert.deepEqual(await stored(agent.id), { voicemail: null, keypad: { send: true } });
    // At the bound: accepted.
    const atBound = await client().patch(`/agents/${agent.id}`, {
      voicemail: { action: 'leave_message', message: 'x'.repeat(1000) },
    });
    assert.equal(atBound.status, 200, atBound.text);
  });
});
