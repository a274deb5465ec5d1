import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { closeApiAndDatabase, startApiOnFreshDatabase, type TestApi } from './support/api.js';
import { chromiumPath } from './support/browser.js';
import type { TestDatabase } from './support/database.js';

// GET /docs, the API reference page: through real HTTP, the page, the renderer's script it names
// (Scalar's standalone bundle, served from node_modules) and the OpenAPI document it points at, with
// their headers; then in headless Chromium, the page renders the document under its own policy
// without reaching anything outside this server.

let db: TestDatabase;
let api: TestApi;
before(async () => {
  ({ db, api } = await startApiOnFreshDatabase());
});
after(() => closeApiAndDatabase(api, db));

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers });

/** The page's script and the document it renders, as the page names them. */
async function pageReferences() {
  const html = await (await get('/docs')).text();
  const script = /<script src="([^"]+)"><\/script>/.exec(html)?.[1];
  const documentUrl = /data-url="([^"]+)"/.exec(html)?.[1];
  assert.ok(script && documentUrl, html);
  return { script, documentUrl };
}

describe('GET /docs', () => {
  test('answers HTML that loads the renderer and points it at /v1/openapi.json, without a key', async () => {
    const res = await get('/docs');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    const html = await res.text();
    assert.match(html, /<script src="\/docs\/assets\/scalar-api-reference\.js"><\/script>/);
    assert.match(html, /<script id="api-reference" data-url="\/v1\/openapi\.json"/);
    assert.doesNotMatch(html, /https?:\/\//, 'nothing is loaded from another origin');
  });

  test('has a policy of its own: only its own scripts, data and connections, never framed', async () => {
    const res = await get('/docs');
    const policy = Object.fromEntries(
      (res.headers.get('content-security-policy') ?? '').split('; ').map((d) => {
        const [name, ...sources] = d.split(' ');
        return [name, sources.join(' ')];
      }),
    );
    assert.equal(policy['default-src'], "'none'");
    assert.equal(policy['script-src'], "'self'", 'no inline script, no eval');
    assert.equal(policy['connect-src'], "'self'");
    assert.equal(policy['img-src'], "'self' data:");
    assert.equal(policy['frame-ancestors'], "'none'");
    assert.equal(policy['base-uri'], "'none'");
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
  });

  test('the script it names answers JavaScript, compressed when asked, revalidated by its ETag', async () => {
    const { script } = await pageReferences();
    const plain = await get(script, { 'accept-encoding': 'identity' });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(plain.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(plain.headers.get('cache-control'), 'no-cache');
    assert.equal(plain.headers.get('content-encoding'), null);
    const source = await plain.text();
    // Booleans, not matches: a failure would print 5 MB.
    assert.ok(source.includes('@scalar/api-reference@'), 'Scalar’s bundle');
    assert.ok(source.length > 1_000_000, 'the whole standalone bundle');

    // fetch() would inflate it unasked: node:http shows the bytes sent.
    const zipped = await rawGet(`${api.url}${script}`, { 'accept-encoding': 'gzip' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.vary, 'Accept-Encoding');
    assert.ok(zipped.body.length < source.length / 2);
    assert.ok(gunzipSync(zipped.body).toString() === source, 'the same bundle, compressed');

    const etag = plain.headers.get('etag');
    assert.match(etag ?? '', /^"scalar-api-reference-\d+\.\d+\.\d+"$/);
    // fetch() sends Cache-Control: no-cache with If-None-Match (a reload): a browser revalidates so.
    const again = await rawGet(`${api.url}${script}`, {
      'accept-encoding': 'identity',
      'if-none-match': etag!,
    });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  });

  test('the document it points at answers JSON', async () => {
    const { documentUrl } = await pageReferences();
    const res = await get(documentUrl);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(((await res.json()) as { openapi: string }).openapi, '3.1.0');
  });

  test('other methods are not served', async () => {
    const res = await fetch(`${api.url}/docs`, { method: 'POST' });
    assert.equal(res.status, 404);
  });
});

const executablePath = chromiumPath();
describe('in Chromium', { skip: executablePath ? false : 'no Chromium on this machine' }, () => {
  test('renders the operations, breaking no rule of its policy and reaching no other origin', async () => {
    const browser = await chromium.launch({ executablePath: executablePath!, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const outside: string[] = [];
      const violations: string[] = [];
      const errors: string[] = [];
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(api.url) && !url.startsWith('data:')) outside.push(url);
      });
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('console', (message) => {
        if (message.text().startsWith('csp ')) violations.push(message.text());
      });
      // The bundle's zod probes for eval once and does without it; every other refusal counts.
      await page.addInitScript({
        content: `document.addEventListener('securitypolicyviolation', (event) => {
          if (event.violatedDirective !== 'script-src' || event.blockedURI !== 'eval')
            console.log('csp ' + event.violatedDirective + ' ' + event.blockedURI);
        });`,
      });
      await page.goto(`${api.url}/docs`);
      await page.getByText('Create an agent (status draft).').first().waitFor({ timeout: 30_000 });
      await page.getByRole('heading', { name: 'Voice Agent Service API' }).waitFor();
      assert.deepEqual(outside, []);
      assert.deepEqual(violations, []);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });
});

/** A GET as node:http sends it: the body is the bytes as sent (no decompression), no headers added. */
async function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{
    status?: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }>((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}
