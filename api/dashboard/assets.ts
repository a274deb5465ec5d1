import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// The dashboard's front end (dashboard/, Preact) is bundled by esbuild in memory when the API
// starts: nothing to build beforehand and nothing written to disk, and no CDN (the machines are
// offline). One bundle of about 40 KB; a build takes well under a second.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dashboard');

export interface DashboardAssets {
  'app.js': string;
  'app.css': string;
}

let built: Promise<DashboardAssets> | undefined;

export function dashboardAssets(): Promise<DashboardAssets> {
  built ??= buildAssets();
  return built;
}

async function buildAssets(): Promise<DashboardAssets> {
  const [bundle, css] = await Promise.all([
    build({
      entryPoints: [path.join(ROOT, 'main.tsx')],
      bundle: true,
      write: false,
      format: 'esm',
      target: 'es2022',
      minify: true,
      jsx: 'automatic',
      jsxImportSource: 'preact',
      logLevel: 'silent',
      legalComments: 'none',
    }),
    readFile(path.join(ROOT, 'styles.css'), 'utf8'),
  ]);
  return { 'app.js': bundle.outputFiles[0]!.text, 'app.css': css };
}
