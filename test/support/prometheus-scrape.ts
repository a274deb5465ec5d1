import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

// A scrape of a `/metrics` endpoint: checked by Prometheus's own parser and linter (`promtool check
// metrics`, from Debian's prometheus package, which .ci/run installs), then read sample by sample
// for the sums the metrics tests compare before and after.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  text: string;
  samples: Sample[];
  /** Metric families by `# TYPE` line: name → counter, gauge, histogram, ... */
  types: Map<string, string>;
  /** The sum of the samples named `name` whose labels include `labels` (a histogram's: `<name>_count`). */
  value(name: string, labels?: Record<string, string>): number;
  /** A histogram's observations: the sum of its `_count` samples whose labels include `labels`. */
  count(name: string, labels?: Record<string, string>): number;
}

/** Lint findings of promtool that are not ours: prom-client's default Node.js metrics. */
const FOREIGN_LINT = /^nodejs_active_\w+_total non-counter metrics should not have "_total" suffix$/;

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  assertValidExposition(text);
  return parseExposition(text);
}

/** Debian's prometheus is installed (.ci/run installs it; with CI=true the tests require it). */
export const prometheusInstalled = spawnSync('promtool', ['--version']).error === undefined;
let saidMissing = false;

/** promtool parses the text as Prometheus does; a problem other than FOREIGN_LINT fails. */
export function assertValidExposition(text: string): void {
  if (!prometheusInstalled && !process.env.CI) {
    if (!saidMissing)
      console.warn('promtool not installed (apt-get install prometheus): exposition not checked');
    saidMissing = true;
    return;
  }
  const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (checked.error) {
    assert.fail(
      `promtool is needed to check the exposition format (apt-get install prometheus): ${checked.error}`,
    );
  }
  const problems = `${checked.stdout}${checked.stderr}`
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !FOREIGN_LINT.test(line));
  assert.ok(
    checked.status === 0 || checked.status === 3,
    `promtool could not parse it: ${problems.join('; ')}`,
  );
  assert.deepEqual(problems, [], 'promtool found problems');
}

export function parseExposition(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      types.set(name, type);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    samples.push(parseSample(line));
  }
  const sum = (name: string, labels: Record<string, string>) =>
    samples
      .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((total, s) => total + s.value, 0);
  return {
    text,
    samples,
    types,
    value: (name, labels = {}) => sum(name, labels),
    count: (name, labels = {}) => sum(`${name}_count`, labels),
  };
}

/** `name{a="x",b="y \"quoted\""} 12.5 [timestamp]` */
function parseSample(line: string): Sample {
  const brace = line.indexOf('{');
  const space = line.indexOf(' ');
  const labels: Record<string, string> = {};
  let rest: string;
  let name: string;
  if (brace !== -1 && brace < space) {
    name = line.slice(0, brace);
    let i = brace + 1;
    while (line[i] !== '}') {
      const eq = line.indexOf('=', i);
      const key = line.slice(i, eq).replace(/^,/, '').trim();
      let value = '';
      let j = eq + 2; // past ="
      for (; line[j] !== '"'; j++) {
        if (line[j] === '\\') {
          j++;
          value += line[j] === 'n' ? '\n' : line[j];
        } else value += line[j];
      }
      labels[key] = value;
      i = j + 1;
      if (line[i] === ',') i++;
    }
    rest = line.slice(i + 1).trim();
  } else {
    name = line.slice(0, space);
    rest = line.slice(space + 1).trim();
  }
  const [value] = rest.split(/\s+/);
  return { name, labels, value: value === '+Inf' ? Infinity : value === '-Inf' ? -Infinity : Number(value) };
}
