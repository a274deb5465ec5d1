import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

// Nothing committed may point outside the repository: a clone (CI's, a new developer's) has only
// the repository, so a path into a sibling folder works on one machine and nowhere else. Every
// file git tracks, plus the untracked ones it would take (not ignored), is read: no text file may
// name the sibling `shared` folder, no Markdown link may resolve above the root, no symlink may
// point out of it.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Spelled in two parts, so that this file does not name it itself. */
const SHARED_SIBLING = ['..', 'shared'].join('/');

/** Paths relative to the root, as git lists them. */
function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(listed.split('\0').filter(Boolean))];
}

/** Whether `target`, taken relative to `fromDir` (a folder under the root), leaves the root. */
function leavesRoot(fromDir: string, target: string): boolean {
  const resolved = target.startsWith('/') ? path.join(ROOT, target) : path.resolve(ROOT, fromDir, target);
  const relative = path.relative(ROOT, resolved);
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
}

/** The link targets of a Markdown text: inline links and images, and reference definitions. */
function markdownTargets(text: string): string[] {
  // Code is not a link: fenced blocks and code spans are left out.
  const prose = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)/g)].map((m) => m[1]!);
  const definitions = [...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm)].map((m) => m[1]!);
  return [...inline, ...definitions].map((target) => target.replace(/^<|>$/g, ''));
}

/** The Markdown links of `file` (relative to the root) whose relative target leaves the root. */
function markdownLinksOutside(file: string, text: string): string[] {
  return markdownTargets(text).filter((target) => {
    // URLs (http:, mailto:, …), protocol-relative ones and anchors in the same page go nowhere on disk.
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//') || target.startsWith('#'))
      return false;
    let filePart = target.split(/[?#]/)[0]!;
    try {
      filePart = decodeURIComponent(filePart);
    } catch {}
    return filePart !== '' && leavesRoot(path.dirname(file), filePart);
  });
}

/** Everything in `file` that reaches outside the repository, one line each. */
function linksOutside(file: string): string[] {
  const full = path.join(ROOT, file);
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(full);
  } catch {
    return []; // tracked, but deleted in the working tree: nothing to commit
  }
  if (stat.isSymbolicLink()) {
    const target = readlinkSync(full);
    return leavesRoot(path.dirname(file), target) ? [`symlink to ${target}`] : [];
  }
  if (!stat.isFile()) return [];
  const bytes = readFileSync(full);
  // Binary files (audio fixtures, images) are not text: a NUL in the first 8 KB says so, as git does.
  if (bytes.subarray(0, 8000).includes(0)) return [];
  return textLinksOutside(file, bytes.toString('utf8'));
}

/** What the text of `file` names outside the repository, one line each. */
function textLinksOutside(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.includes(SHARED_SIBLING)) found.push(`line ${i + 1} names ${SHARED_SIBLING}: ${line.trim()}`);
  });
  if (/\.(md|markdown)$/i.test(file)) {
    for (const target of markdownLinksOutside(file, text)) found.push(`Markdown link to ${target}`);
  }
  return found;
}

describe('links out of the repository', () => {
  test('the check finds them (and leaves links inside alone)', () => {
    const outside = (file: string, text: string) => markdownLinksOutside(file, text);
    assert.deepEqual(outside('README.md', '[a](../x.md) ![b](<../img.png>) [c](docs/calls.md)'), [
      '../x.md',
      '../img.png',
    ]);
    assert.deepEqual(outside('docs/calls.md', '[a](../README.md) [b](../../x.md#y) [c](/../x)'), [
      '../../x.md#y',
      '/../x',
    ]);
    assert.deepEqual(outside('docs/a.md', '[ref]: ../../notes.md\n[ok]: ../README.md'), ['../../notes.md']);
    assert.deepEqual(
      outside(
        'README.md',
        '[w](https://example.com/../x) [m](mailto:a@b.c) [h](#run-it) `[c](../x)`\n```\n[d](../x)\n```\n',
      ),
      [],
    );
    assert.deepEqual(
      textLinksOutside('scripts/x.ts', `const a = 1;\nimport '${SHARED_SIBLING}/tool.js';\n`),
      [`line 2 names ${SHARED_SIBLING}: import '${SHARED_SIBLING}/tool.js';`],
    );
    assert.deepEqual(textLinksOutside('README.md', `see [notes](${SHARED_SIBLING}/notes.md)`).length, 2);
  });

  test('no tracked or addable file names the sibling shared folder, links above the root or symlinks out', () => {
    const files = repositoryFiles();
    assert.ok(files.includes('README.md') && files.includes('package.json'), 'git lists the repository');
    const offenders = files.flatMap((file) => linksOutside(file).map((what) => `${file}: ${what}`));
    assert.deepEqual(offenders, []);
  });
});
