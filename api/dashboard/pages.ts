import type { Middleware } from 'koa';
import { routeNotFound } from '../http/errors.js';
import type { ApiState } from '../http/route.js';
import { type DashboardAssets, dashboardAssets } from './assets.js';
import { type SessionStore, sessionToken } from './sessions.js';

// The dashboard's pages: one HTML shell for every page (the front end routes by path), the
// bundle and the stylesheet. A page needs a session: without one the browser is sent to sign-in
// (and back afterwards), and a person with several workspaces to the picker first.

const PUBLIC_PAGES = new Set(['/sign-in', '/invite']);
const ASSETS = new Map<string, keyof DashboardAssets>(
  (['app.js', 'talk-worklet.js', 'app.css'] as const).map((name) => [`/assets/${name}`, name]),
);
const PAGE = /^\/(agents|calls|numbers|webhooks|keys|usage|workspaces)(\/[0-9a-f-]{36})?$/;

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Voice agents</title>
<link rel="stylesheet" href="/assets/app.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body><div id="app"><p class="loading" role="status">Loading…</p></div></body>
</html>
`;

/** Only our own code, no framing, no referrer: the page shows secrets once (keys, webhooks). */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

export function dashboardPages(sessions: SessionStore): Middleware<ApiState> {
  return async (ctx) => {
    if (!['GET', 'HEAD'].includes(ctx.method)) throw routeNotFound(ctx.method, ctx.path);
    const asset = ASSETS.get(ctx.path);
    if (asset) {
      const assets = await dashboardAssets();
      const name = asset;
      ctx.set(SECURITY_HEADERS);
      ctx.set('Cache-Control', 'no-cache');
      ctx.type = name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8';
      ctx.body = assets[name];
      return;
    }
    const isPublic = PUBLIC_PAGES.has(ctx.path);
    if (!isPublic && ctx.path !== '/' && !PAGE.test(ctx.path)) throw routeNotFound(ctx.method, ctx.path);
    if (!isPublic) {
      const session = await sessions.find(sessionToken(ctx));
      if (!session) {
        const next = ctx.path === '/' ? '' : `?next=${encodeURIComponent(ctx.path)}`;
        return ctx.redirect(`/sign-in${next}`);
      }
      if (!session.member && ctx.path !== '/workspaces') return ctx.redirect('/workspaces');
      if (ctx.path === '/') return ctx.redirect('/agents');
    }
    ctx.set(SECURITY_HEADERS);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = SHELL;
  };
}
