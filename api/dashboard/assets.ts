import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// The dashboard's front end (dashboard/, Preact) is bundled by esbuild in memory when the API
// starts: nothing to build beforehand and nothing written to disk, and no CDN (the machines are
// offline). One bundle of about 40 KB; a build takes well under a second. The test panel's audio
// thread (dashboard/talk-worklet.ts) is a bundle of its own: an AudioWorklet loads a module by URL.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dashboard');

export interface DashboardAssets {
  'app.js': string;
  'talk-worklet.js': string;
  'app.css': string;
}

let built: Promise<DashboardAssets> | undefined;

export function dashboardAssets(): Promise<DashboardAssets> {
  built ??= buildAssets();
  return built;
}

async function buildAssets(): Promise<DashboardAssets> {
  const bundle = (entry: string) =>
    build({
      entryPoints: [path.join(ROOT, entry)],
      bundle: true,
      write: false,
      format: 'esm',
      target: 'es2022',
      minify: true,
      jsx: 'automatic',
      jsxImportSource: 'preact',
      logLevel: 'silent',
      legalComments: 'none',
    }).then((result) => result.outputFiles[0]!.text);
  const [app, worklet, css] = await Promise.all([
    bundle('main.tsx'),
    bundle('talk-worklet.ts'),
    readFile(path.join(ROOT, 'styles.css'), 'utf8'),
  ]);
  return { 'app.js': app, 'talk-worklet.js': worklet, 'app.css': css };
}
