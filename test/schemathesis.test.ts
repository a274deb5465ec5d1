import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createPhoneNumber } from '../lib/accounts.js';
import {
  ensureSchemathesis,
  pythonVenvAvailable,
  runSchemathesis,
  SCHEMATHESIS_VERSION,
} from '../scripts/schemathesis.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// Schemathesis against the API's own /v1/openapi.json, tried as a new integrator would: every
// check (`--checks all`: no 5xx, statuses and bodies as documented, what the schema calls invalid
// refused and what it calls valid accepted, ...) over the examples, coverage, fuzzing and stateful
// phases (the stateful one walks the document's links: create an agent, then read, change,
// publish and delete it). A small budget per operation (5 examples) keeps it to about a minute on 2 cores;
// `npm run schemathesis -- --max-examples 100` runs it harder (SCHEMATHESIS_VERBOSE=1 prints the
// report of a passing run too). Webhook URLs may be http and
// private here (WEBHOOKS_ALLOW_PRIVATE_TARGETS), as in the other webhook tests, and no worker
// runs, so nothing is ever delivered or dialled.

/** npm test's budget: bounded, so the run stays short; `npm run schemathesis` gives 50 (or more). */
const MAX_EXAMPLES = Number(process.env.SCHEMATHESIS_MAX_EXAMPLES || 5);
const SEED = process.env.SCHEMATHESIS_SEED ? Number(process.env.SCHEMATHESIS_SEED) : undefined;
/** Runs stop after this long: 8 minutes, more for bigger budgets (150 examples fuzz for 5 minutes). */
const RUN_TIMEOUT_MS = Number(
  process.env.SCHEMATHESIS_TIMEOUT_MS || Math.max(8 * 60_000, MAX_EXAMPLES * 6_000),
);
/** SCHEMATHESIS_PHASES=stateful (comma-separated) runs some phases only; default all four. */
const PHASES = process.env.SCHEMATHESIS_PHASES || 'examples,coverage,fuzzing,stateful';

const venv = pythonVenvAvailable();
let db: TestDatabase;
let api: TestApi;
let owner: Fixture;

before(async () => {
  if (!venv) return;
  db = await freshDatabase();
  api = await startApi({ orm: db.orm, settings: { webhooksAllowPrivateTargets: true }, logLevel: 'error' });
  owner = await createFixture(db.orm, { requestsPerSecond: 100_000 });
  // Numbers, so that POST /calls and PATCH /phone-numbers have something real to work with.
  for (const number of ['+4791000001', '+4791000002']) {
    await createPhoneNumber(db.orm.em.fork(), { workspaceId: owner.workspaceId, number, label: 'Desk' });
  }
});
after(async () => {
  await api?.close();
  await db?.close();
});

test(`schemathesis ${SCHEMATHESIS_VERSION} finds nothing: the document says what the server does`, {
  skip: venv ? false : 'python3 cannot make a virtualenv here (install python3-venv); schemathesis skipped',
  timeout: RUN_TIMEOUT_MS + 5 * 60_000,
}, async () => {
  const st = await ensureSchemathesis({ log: () => {} });
  const reportDir = path.resolve('.data/schemathesis');
  mkdirSync(reportDir, { recursive: true });
  const result = await runSchemathesis({
    st,
    openApiUrl: `${api.url}/v1/openapi.json`,
    apiKey: owner.secret,
    maxExamples: MAX_EXAMPLES,
    seed: SEED,
    phases: PHASES,
    reportDir,
    timeoutMs: RUN_TIMEOUT_MS,
  });
  if (process.env.SCHEMATHESIS_VERBOSE) process.stdout.write(result.output);
  // The whole report on failure: each finding with its curl reproduction, and the seed.
  assert.equal(result.code, 0, result.output);
  if (PHASES.includes('stateful')) {
    assert.match(result.output, /API Links: +\d+ covered/, 'the stateful phase followed links');
  }
});
