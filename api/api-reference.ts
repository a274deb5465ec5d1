import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Context, Next } from 'koa';
import { API_PREFIX } from './http/router.js';

// GET /docs: the API reference, rendered in the browser by Scalar's standalone bundle from the
// service's own OpenAPI document (GET /v1/openapi.json). The bundle is served from node_modules by
// this server (the machines are offline: no CDN); no key, no session, like the document itself.

export const API_REFERENCE_PATH = '/docs';
export const API_REFERENCE_SCRIPT_PATH = '/docs/assets/scalar-api-reference.js';
export const OPENAPI_DOCUMENT_PATH = `${API_PREFIX}/openapi.json`;

/**
 * Scalar's own defaults reach out (fonts, telemetry, its AI agent, its proxy); every one is off, and
 * the page's policy would refuse them anyway. Requests of "Test Request" go to this origin.
 */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
};

/**
 * Only our own script (no inline script, no eval: the bundle's one `Function('')` is a feature probe
 * it does without), our own data, no framing, no referrer. Styles are the one allowance: the bundle
 * writes <style> elements (its theme, its notices) and style attributes at run time, and only its
 * main stylesheet would carry a nonce; the page shows nothing secret and loads nothing from outside.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

// The bundle reads its configuration from the #api-reference element and renders in its place.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Voice Agent API reference</title>
</head>
<body>
<script id="api-reference" data-url="${OPENAPI_DOCUMENT_PATH}" data-configuration="${JSON.stringify(SCALAR_CONFIGURATION).replaceAll('"', '&quot;')}"></script>
<script src="${API_REFERENCE_SCRIPT_PATH}"></script>
</body>
</html>
`;

interface ScalarBundle {
  version: string;
  plain: Buffer;
  /** About a quarter of the plain bundle's 5 MB. */
  gzipped: Buffer;
}

let bundle: Promise<ScalarBundle> | undefined;

/** Read and compressed once per process, on the first request that needs it. */
function scalarBundle(): Promise<ScalarBundle> {
  bundle ??= (async () => {
    // The package exports no path to its browser build: it sits beside the module entry, in dist/.
    const dist = path.dirname(fileURLToPath(import.meta.resolve('@scalar/api-reference')));
    const [plain, manifest] = await Promise.all([
      readFile(path.join(dist, 'browser', 'standalone.js')),
      readFile(path.join(dist, '..', 'package.json'), 'utf8'),
    ]);
    const version = (JSON.parse(manifest) as { version: string }).version;
    return { version, plain, gzipped: await promisify(gzip)(plain) };
  })();
  return bundle;
}

export async function apiReference(ctx: Context, next: Next): Promise<void> {
  if (!['GET', 'HEAD'].includes(ctx.method)) return next();
  if (ctx.path === API_REFERENCE_PATH) {
    ctx.set(SECURITY_HEADERS);
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
    return;
  }
  if (ctx.path === API_REFERENCE_SCRIPT_PATH) {
    const scalar = await scalarBundle();
    ctx.set('X-Content-Type-Options', 'nosniff');
    // Revalidated on every load; the package's version is its ETag, so a 304 skips the 5 MB.
    ctx.set('Cache-Control', 'no-cache');
    ctx.vary('Accept-Encoding');
    ctx.type = 'text/javascript; charset=utf-8';
    const gzipped = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
    if (gzipped) ctx.set('Content-Encoding', 'gzip');
    ctx.body = gzipped ? scalar.gzipped : scalar.plain;
    // Each encoding is a representation of its own, with its own tag.
    ctx.etag = `scalar-api-reference-${scalar.version}${gzipped ? '-gzip' : ''}`;
    if (ctx.fresh) ctx.status = 304;
    return;
  }
  return next();
}
