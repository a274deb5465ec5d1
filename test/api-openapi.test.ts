import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { allRoutes } from '../api/routes/index.js';
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

// GET /v1/openapi.json: a valid OpenAPI 3.1 document, listing exactly the routes served, every
// status each operation can answer, and schemas that real answers match.

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
type Json = any;
let doc: Json;
before(async () => {
  ({ db, api, owner } = await startApiOnFreshDatabase());
  doc = (await api.client().get('/openapi.json')).body;
});
after(() => closeApiAndDatabase(api, db));

const client = () => api.client(owner.secret);
type Operation = { method: string; path: string; op: Json };
const operations = (): Operation[] =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );

/** An ajv for the document's schemas: JSON Schema 2020-12 (OpenAPI 3.1's dialect), strict. */
function documentAjv() {
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('bcp47', true);
  ajv.addKeyword('example');
  ajv.addSchema(doc.components.schemas.Error, '#/components/schemas/Error');
  return ajv;
}

describe('the document', () => {
  test('is served without a key, with X-Request-Id', async () => {
    const res = await api.client().get('/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.ok(res.headers.get('x-request-id'));
  });

  test('is valid OpenAPI 3.1 (checked against the specification’s JSON Schema)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(validator.version, '3.1');
    assert.deepEqual(result, { valid: true });
    // The check can fail: a broken copy is refused.
    const broken = structuredClone(doc);
    broken.paths['/me'].get.responses = 'none';
    assert.equal((await new Validator().validate(broken)).valid, false);
  });

  test('every schema in it is a valid JSON Schema 2020-12 (strict mode: no unknown keywords)', () => {
    const ajv = documentAjv();
    for (const { method, path, op } of operations()) {
      const schemas = [
        ...(op.parameters ?? []).map((p: { schema: unknown }) => p.schema),
        op.requestBody?.content['application/json'].schema,
        // Every media type's: JSON, and a recording's audio/wav bytes.
        ...Object.values(op.responses as Record<string, Json>).flatMap((r) =>
          Object.values((r.content ?? {}) as Record<string, Json>).map((media) => media.schema),
        ),
      ].filter(Boolean);
      for (const schema of schemas) {
        assert.doesNotThrow(() => ajv.compile(schema), `${method} ${path}`);
      }
    }
  });

  test('lists exactly the routes served; each one exists (401 without a key, never route_not_found)', async () => {
    const documented = operations().map(({ method, path }) => `${method} ${path}`);
    const served = allRoutes.map((r) => `${r.method} ${r.path.replace(/:([a-z_]+)/g, '{$1}')}`);
    assert.deepEqual(documented.sort(), served.sort());
    for (const expected of [
      'GET /me',
      'GET /agents',
      'POST /agents',
      'GET /agents/{agent_id}',
      'PATCH /agents/{agent_id}',
      'DELETE /agents/{agent_id}',
      'POST /agents/{agent_id}/publish',
      'POST /agents/{agent_id}/unpublish',
      'GET /phone-numbers',
      'GET /phone-numbers/{phone_number_id}',
      'PATCH /phone-numbers/{phone_number_id}',
    ]) {
      assert.ok(documented.includes(expected), expected);
    }
    for (const op of documented) {
      const [method, path] = op.split(' ');
      const concrete = path!.replace(/\{[^}]+\}/g, crypto.randomUUID());
      assertApiError(await api.client().request(method!, concrete), 401, 'api_key_missing');
    }
  });
});

describe('links and request shapes', () => {
  test('every link names an operation of the document and exactly its path parameters', () => {
    const byId = new Map(operations().map((o) => [o.op.operationId, o]));
    let links = 0;
    for (const { method, path, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        for (const [name, link] of Object.entries((response.links ?? {}) as Record<string, Json>)) {
          links++;
          const target = byId.get(link.operationId);
          assert.ok(target, `${method} ${path} ${status} link ${name}: no operation ${link.operationId}`);
          const pathParams = (target.op.parameters ?? [])
            .filter((p: Json) => p.in === 'path')
            .map((p: Json) => p.name)
            .sort();
          assert.deepEqual(Object.keys(link.parameters).sort(), pathParams, `${method} ${path} → ${name}`);
        }
      }
    }
    assert.ok(links >= 10, `only ${links} links`);
    // Each creating operation links to every operation that takes the id it returns.
    const linked = (path: string, method: string, status: string) =>
      Object.values(doc.paths[path][method].responses[status].links ?? {}).map((l: Json) => l.operationId);
    const takingParam = (param: string) =>
      operations()
        .filter(({ path }) => path.endsWith(`{${param}}`) || path.includes(`{${param}}/`))
        .filter(({ path }) => !path.includes('{', path.indexOf(`{${param}}`) + param.length + 2))
        .map(({ op }) => op.operationId)
        .sort();
    assert.deepEqual(linked('/agents', 'post', '201').sort(), takingParam('agent_id'));
    assert.deepEqual(linked('/calls', 'post', '202').sort(), takingParam('call_id'));
    assert.deepEqual(linked('/webhooks', 'post', '201').sort(), takingParam('webhook_id'));
  });

  test('PATCH bodies need a field (minProperties), a body that requires nothing may be left out', () => {
    for (const { method, path, op } of operations()) {
      if (!op.requestBody) continue;
      const schema = op.requestBody.content['application/json'].schema;
      if (method === 'PATCH' && !schema.required?.length) assert.equal(schema.minProperties, 1, path);
      assert.equal(op.requestBody.required, method === 'PATCH' || (schema.required?.length ?? 0) > 0, path);
    }
    assert.equal(doc.paths['/webhooks/{webhook_id}/test'].post.requestBody.required, false);
  });

  test('the patterns of the document are the server’s rules (language tag, cursor, text without NUL)', async () => {
    const language =
      doc.paths['/agents'].post.requestBody.content['application/json'].schema.properties.language;
    const tag = new RegExp(language.pattern, 'u');
    for (const ok of ['nb-NO', 'en', 'de-CH-1996', 'en-US-x-twain', 'i-klingon']) assert.ok(tag.test(ok), ok);
    for (const bad of ['', 'english', 'nb_NO', 'de-1996-1996', 'en-a-bb-a-cc'])
      assert.ok(!tag.test(bad), bad);
    for (const value of ['', 'de-1996-1996']) {
      assertApiError(
        await client().post('/agents', { name: 'n', language: value }),
        400,
        'parameter_invalid',
        'language',
      );
    }

    const cursor = doc.paths['/agents'].get.parameters.find((p: Json) => p.name === 'cursor').schema;
    for (let i = 0; i < 2; i++) await client().post('/agents', { name: `page ${i}` });
    const page = await client().get('/agents?limit=1');
    assert.match(page.body.next_cursor, new RegExp(cursor.pattern));
    // Any cursor of that form is a position: the page after it answers 200, never 400 or 500.
    for (const forged of ['A'.repeat(30), `f${'_'.repeat(29)}`, page.body.next_cursor]) {
      assert.equal((await client().get(`/agents?cursor=${forged}`)).status, 200, forged);
    }
    for (const forged of ['0', `g${'A'.repeat(29)}`, 'A'.repeat(31)]) {
      assert.doesNotMatch(forged, new RegExp(cursor.pattern));
      assertApiError(await client().get(`/agents?cursor=${forged}`), 400, 'parameter_invalid', 'cursor');
    }

    const metadata =
      doc.paths['/calls'].post.requestBody.content['application/json'].schema.properties.metadata;
    assert.equal(metadata.additionalProperties.pattern, '^[^\\u0000]*$');
    assert.equal(metadata.propertyNames.pattern, '^[^\\u0000]*$');
    assert.ok(!new RegExp(metadata.additionalProperties.pattern, 'u').test('a\u0000b'));
    assertApiError(await client().post('/agents', { name: 'a\u0000b' }), 400, 'parameter_invalid', 'name');
  });
});

describe('documented statuses', () => {
  test('every operation documents the errors the platform can answer anywhere, with the Error schema', () => {
    for (const { method, path, op } of operations()) {
      const statuses = Object.keys(op.responses);
      const expected = ['400', '401', '429', '500', '503'];
      if (op['x-required-scope'] || op['x-required-roles']) expected.push('403');
      if (path.includes('{')) expected.push('404');
      if (op.parameters?.some((p: { name: string }) => p.name === 'Idempotency-Key')) expected.push('409');
      for (const status of expected) {
        assert.ok(statuses.includes(status), `${method} ${path} documents ${status}`);
      }
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const schema = op.responses[status].content?.['application/json']?.schema;
        assert.ok(schema, `${method} ${path} ${status} has a body schema`);
      }
    }
  });

  // The spec's Errors column for each endpoint of the platform, with one difference (see
  // docs/api-platform.md): GET /me also documents 400, since an unknown query parameter is refused
  // on every endpoint. (POST /agents's 422 is a transfer destination the dialling check refuses.)
  const SPEC_ERRORS: Record<string, number[]> = {
    'GET /me': [400, 401],
    'GET /agents': [400, 401, 403],
    'POST /agents': [400, 401, 403, 409, 422],
    'GET /agents/{agent_id}': [400, 401, 403, 404],
    'PATCH /agents/{agent_id}': [400, 401, 403, 404, 422],
    'DELETE /agents/{agent_id}': [400, 401, 403, 404],
    'POST /agents/{agent_id}/publish': [400, 401, 403, 404, 422],
    'POST /agents/{agent_id}/unpublish': [400, 401, 403, 404],
    'GET /phone-numbers': [400, 401, 403],
    'GET /phone-numbers/{phone_number_id}': [400, 401, 403, 404],
    'PATCH /phone-numbers/{phone_number_id}': [400, 401, 403, 404],
  };
  test('each platform endpoint documents the error statuses of the spec, and no 4xx the spec does not list', () => {
    for (const [endpoint, errors] of Object.entries(SPEC_ERRORS)) {
      const [method, path] = endpoint.split(' ');
      const op = doc.paths[path!][method!.toLowerCase()];
      const documented4xx = Object.keys(op.responses)
        .map(Number)
        .filter((s) => s >= 400 && s < 500 && s !== 429);
      assert.deepEqual(documented4xx.sort(), errors, endpoint);
    }
  });

  test('success statuses: 201 for POST /agents, 200 elsewhere', () => {
    for (const { method, path, op } of operations()) {
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      if (!(`${method} ${path}` in SPEC_ERRORS)) continue;
      assert.deepEqual(
        success,
        [method === 'POST' && path === '/agents' ? '201' : '200'],
        `${method} ${path}`,
      );
    }
  });
});

describe('real answers match the documented schemas', () => {
  test('successes and refusals of every platform endpoint', async () => {
    const ajv = documentAjv();
    const check = (path: string, method: string, res: { status: number; body: unknown }) => {
      const response = doc.paths[path][method].responses[res.status];
      assert.ok(response, `${method} ${path} does not document ${res.status}`);
      const schema = response.content['application/json'].schema;
      const validate = ajv.compile(schema.$ref ? { $ref: '#/components/schemas/Error' } : schema);
      assert.ok(validate(res.body), `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors)}`);
    };
    const c = client();
    const created = await c.post('/agents', { name: 'Schema', system_prompt: 's', voice_id: 'v' });
    const id = created.body.id;
    const number = await createPhoneNumber(db.orm.em.fork(), {
      workspaceId: owner.workspaceId,
      number: '+4798765432',
      label: 'Desk',
    });
    const viewer = api.client(
      (await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'viewer' })).secret,
    );

    check('/me', 'get', await c.get('/me'));
    check('/me', 'get', await api.client().get('/me'));
    check('/agents', 'post', created);
    check('/agents', 'post', await c.post('/agents', { nope: 1 }));
    check('/agents', 'post', await viewer.post('/agents', { name: 'x' }));
    const key = crypto.randomUUID();
    await c.post('/agents', { name: 'k' }, { 'idempotency-key': key });
    check('/agents', 'post', await c.post('/agents', { name: 'other' }, { 'idempotency-key': key }));
    check('/agents', 'get', await c.get('/agents?limit=1'));
    check('/agents', 'get', await c.get('/agents?limit=0'));
    check('/agents/{agent_id}', 'get', await c.get(`/agents/${id}`));
    check('/agents/{agent_id}', 'patch', await c.patch(`/agents/${id}`, { description: null }));
    check('/agents/{agent_id}', 'patch', await c.patch(`/agents/${id}`, {}));
    check('/agents/{agent_id}/publish', 'post', await c.post(`/agents/${id}/publish`));
    check('/agents/{agent_id}', 'patch', await c.patch(`/agents/${id}`, { system_prompt: '' }));
    check('/agents/{agent_id}/unpublish', 'post', await c.post(`/agents/${id}/unpublish`));
    check('/phone-numbers', 'get', await c.get('/phone-numbers'));
    check('/phone-numbers/{phone_number_id}', 'get', await c.get(`/phone-numbers/${number.id}`));
    check(
      '/phone-numbers/{phone_number_id}',
      'patch',
      await c.patch(`/phone-numbers/${number.id}`, { agent_id: id }),
    );
    check('/agents/{agent_id}', 'delete', await c.delete(`/agents/${id}`));
    check('/agents/{agent_id}', 'get', await c.get(`/agents/${id}`));
    check('/agents/{agent_id}', 'get', await c.get('/agents/not-a-uuid'));
    check('/agents/{agent_id}/publish', 'post', await c.post(`/agents/${crypto.randomUUID()}/publish`));
  });
});
