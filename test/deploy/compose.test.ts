import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { metricsRegistry, reviewsGauge } from '../../metrics';
import { loadConfig } from '../../runtime/config';
import { defaultMetricsPorts } from '../../runtime/metrics-server';
import { searchAttributeNames } from '../../runtime/search-attributes';
import { interpolate, mountedPath, pinnedVersions, readCompose, serviceEnvironment } from '../../deploy/rehearsal/compose';

// The compose deployment is for our users; these machines have no Docker engine to run it (the README says what
// was and was not run). What can be checked without one is checked here: it parses, every service is on a
// maintained image, the order of start-up holds, and the setup scripts it mounts exist and agree with the code.

const root = new URL('../../', import.meta.url);
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
}

describe('docker-compose.yml', () => {
  const { services } = compose;

  it('runs Temporal from its server image with a schema step and a setup step, none from the deprecated auto-setup', () => {
    expect(Object.keys(services).sort()).toEqual([
      'api', 'codec', 'grafana', 'jaeger', 'postgres', 'prometheus', 'proxy', 'temporal', 'temporal-admin-tools', 'temporal-schema', 'temporal-ui', 'worker',
    ]);
    for (const [name, service] of Object.entries(services)) expect(service.image ?? '', name).not.toMatch(/auto-setup/);
    expect(services.temporal!.image).toMatch(/^temporalio\/server:/);
    expect(services['temporal-schema']!.image).toMatch(/^temporalio\/admin-tools:/);
    expect(services['temporal-admin-tools']!.image).toMatch(/^temporalio\/admin-tools:/);
    expect(services['temporal-ui']!.image).toMatch(/^temporalio\/ui:/);
  });

  it('starts each part once what it needs is ready', () => {
    expect(services['temporal-schema']!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(services.temporal!.depends_on).toEqual({ 'temporal-schema': { condition: 'service_completed_successfully' } });
    expect(services['temporal-admin-tools']!.depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
    for (const name of ['api', 'worker']) {
      expect(services[name]!.depends_on, name).toEqual({
        postgres: { condition: 'service_healthy' },
        'temporal-admin-tools': { condition: 'service_completed_successfully' },
      });
    }
    expect(services.proxy!.depends_on).toEqual({ api: { condition: 'service_healthy' } });
    expect(services.api!.healthcheck!.test.join(' ')).toContain('/readyz');
  });

  it('publishes the proxy, not the api, so that api replicas scale; the Web UI on loopback only', () => {
    expect(services.api!.ports).toBeUndefined();
    expect(services.proxy!.ports).toEqual(['${GATEHOUSE_PORT:-3000}:3000']);
    expect(services['temporal-ui']!.ports).toEqual(['127.0.0.1:${TEMPORAL_UI_PORT:-8233}:8080']);
    const caddyfile = readFileSync(new URL('deploy/proxy/Caddyfile', root), 'utf8');
    expect(caddyfile).toMatch(/dynamic a \{\s*name api\s*port 3000/);
  });

  it('encrypts payloads with one required key, and serves the codec to the Web UI on loopback', () => {
    const keys = '${PAYLOAD_ENCRYPTION_KEYS:?put PAYLOAD_ENCRYPTION_KEYS in .env (see the README; npx gatehouse temporal payload-key makes one)}';
    for (const name of ['api', 'worker', 'codec']) expect(services[name]!.environment!.PAYLOAD_ENCRYPTION_KEYS, name).toBe(keys);
    expect(services.codec!.command).toEqual(['temporal', 'codec']);
    expect(services.codec!.ports).toEqual(['127.0.0.1:${CODEC_PORT:-8234}:8234']);
    expect(services.codec!.environment).toMatchObject({
      CODEC_HOST: '0.0.0.0',
      CODEC_PORT: 8234,
      TEMPORAL_UI_URL: 'http://localhost:${TEMPORAL_UI_PORT:-8233}',
      CODEC_ALLOWED_ORIGINS: 'http://127.0.0.1:${TEMPORAL_UI_PORT:-8233}',
    });
    expect(services['temporal-ui']!.environment!.TEMPORAL_CODEC_ENDPOINT).toBe('http://localhost:${CODEC_PORT:-8234}');
  });

  it('seals the stored secrets with one required key, the api and the worker alike (the codec has no use for it)', () => {
    const keys = '${SECRETS_ENCRYPTION_KEYS:?put SECRETS_ENCRYPTION_KEYS in .env (see the README; npx gatehouse secrets key makes one)}';
    for (const name of ['api', 'worker']) expect(services[name]!.environment!.SECRETS_ENCRYPTION_KEYS, name).toBe(keys);
    expect(services.codec!.environment!.SECRETS_ENCRYPTION_KEYS).toBeUndefined();
  });

  it('mounts setup scripts that exist, and registers the search attributes the code uses', () => {
    for (const name of ['temporal-schema', 'temporal-admin-tools']) {
      const service = services[name]!;
      expect(service.volumes).toEqual(['./deploy/temporal:/setup:ro']);
      const script = [...(service.entrypoint ?? []), ...(service.command ?? [])].find((part) => part.startsWith('/setup/'))!;
      expect(existsSync(new URL(`deploy/temporal/${script.slice('/setup/'.length)}`, root)), script).toBe(true);
    }
    const setup = readFileSync(new URL('deploy/temporal/setup-namespace.sh', root), 'utf8');
    const registered = setup.match(/for name in ([^;]+);/)![1]!.trim().split(/\s+/);
    expect(registered).toEqual(searchAttributeNames);
  });

  it('adds Prometheus, Grafana with the dashboard, and Jaeger only with the observability profile', () => {
    for (const name of ['prometheus', 'grafana', 'jaeger']) {
      expect(services[name]!.profiles, name).toEqual(['observability']);
      expect(services[name]!.ports![0], name).toMatch(/^127\.0\.0\.1:/);
    }
    for (const name of ['api', 'worker', 'postgres', 'temporal', 'proxy', 'codec']) expect(services[name]!.profiles, name).toBeUndefined();
    expect(services.api!.environment!.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('${OTEL_EXPORTER_OTLP_ENDPOINT:-}');
    for (const mount of [...services.prometheus!.volumes!, ...services.grafana!.volumes!]) {
      expect(existsSync(new URL(mount.split(':')[0]!.replace(/^\.\//, ''), root)), mount).toBe(true);
    }
  });

  it("scrapes every replica's metrics on the ports the processes serve them", () => {
    const prometheus = parse(readFileSync(new URL('deploy/prometheus/prometheus.yml', root), 'utf8')) as {
      scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; type: string; port: number }[] }[];
    };
    const targets = Object.fromEntries(prometheus.scrape_configs.map((job) => [job.job_name, job.dns_sd_configs.map(({ names, type, port }) => `${type} ${names.join()}:${port}`)]));
    expect(targets).toEqual({
      'gatehouse-api': [`A api:${defaultMetricsPorts.api}`],
      'gatehouse-worker': [`A worker:${defaultMetricsPorts.worker}`],
      'temporal-sdk': [`A worker:${loadConfig({}).metrics.temporalPort}`],
    });
    expect(services.api!.environment!.METRICS_HOST).toBe('0.0.0.0');
  });

  it("charts Gatehouse's metrics by the names the service registers", async () => {
    const dashboard = JSON.parse(readFileSync(new URL('deploy/grafana/dashboards/gatehouse.json', root), 'utf8')) as {
      uid: string;
      panels: { type: string; targets?: { expr: string; datasource: { uid: string } }[] }[];
    };
    const provisioning = parse(readFileSync(new URL('deploy/grafana/provisioning/datasources/datasources.yml', root), 'utf8')) as { datasources: { uid: string }[] };
    const sources = provisioning.datasources.map((source) => source.uid);
    // The reviews gauge is registered where metrics are served (it reads the database when scraped).
    reviewsGauge(async () => ({}));
    const registered = new Set((await metricsRegistry.getMetricsAsJSON()).map((metric) => metric.name));
    const targets = dashboard.panels.flatMap((panel) => panel.targets ?? []);
    expect(targets.length).toBeGreaterThan(10);
    for (const target of targets) {
      expect(sources).toContain(target.datasource.uid);
      for (const name of target.expr.match(/\bgatehouse_\w+/g) ?? []) expect(registered, name).toContain(name.replace(/_(bucket|sum|count)$/, ''));
    }
    // The Temporal SDK's names are checked against a running worker's, in test/runtime/metrics.test.ts.
    expect(targets.some((target) => /\btemporal_/.test(target.expr))).toBe(true);
  });

  it('pins every image to a version, the proxy included (the rehearsal builds the same versions natively)', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.image && !service.build) expect(service.image, name).toMatch(/:\$\{[A-Z_]+_VERSION:-v?\d+\.\d+\.\d+\}$|:\d+$/);
    }
    expect(services.proxy!.image).toBe('caddy:${CADDY_VERSION:-2.11.9}');
    expect(pinnedVersions()).toEqual({ temporalServer: '1.31.0', temporalAdminTools: '1.31.0', caddy: '2.11.9' });
  });

  it("gives Temporal's server the dynamic configuration file it needs to start, from deploy/temporal/dynamicconfig", () => {
    const path = services.temporal!.environment!.DYNAMIC_CONFIG_FILE_PATH as string;
    const file = mountedPath(readCompose(), 'temporal', path);
    expect(file).toMatch(/deploy\/temporal\/dynamicconfig\/gatehouse\.yaml$/);
    expect(existsSync(file)).toBe(true);
    // An empty file or a map of settings; the server refuses anything else.
    const settings = parse(readFileSync(file, 'utf8')) as unknown;
    expect(settings === null || (typeof settings === 'object' && !Array.isArray(settings))).toBe(true);
  });

  it('has setup scripts that run outside a container too: the tool named by TEMPORAL_SQL_TOOL, its own schemas, no nc', () => {
    const schema = readFileSync(new URL('deploy/temporal/setup-schema.sh', root), 'utf8');
    expect(schema).toContain('${TEMPORAL_SQL_TOOL:-temporal-sql-tool}');
    expect(schema).toContain('--schema-name "postgresql/v12/$schema"');
    expect(schema).not.toMatch(/\bnc\b|\/etc\/temporal\/schema/);
  });
});

describe("the rehearsal's reading of docker-compose.yml", () => {
  it('interpolates as compose does', () => {
    expect(interpolate('${A:-x} ${B-y} $A $$A', { A: 'a' })).toBe('a y a $A');
    expect(interpolate('${A:-x}|${A-x}', { A: '' })).toBe('x|');
    expect(() => interpolate('${KEY:?put KEY in .env}', {})).toThrow('put KEY in .env');
  });

  it("hands the api and the worker compose's environment, the payload and secrets keys required", () => {
    const variables = { PAYLOAD_ENCRYPTION_KEYS: 'k1:AAAA', SECRETS_ENCRYPTION_KEYS: 's1:BBBB', POSTGRES_PASSWORD: 'secret' };
    const api = serviceEnvironment(readCompose(), 'api', variables);
    expect(api).toMatchObject({
      DATABASE_URL: 'postgres://gatehouse:secret@postgres:5432/gatehouse',
      TEMPORAL_ADDRESS: 'temporal:7233',
      HOST: '0.0.0.0',
      PORT: '3000',
      TRUST_PROXY: '1',
      METRICS_HOST: '0.0.0.0',
      PAYLOAD_ENCRYPTION_KEYS: 'k1:AAAA',
      SECRETS_ENCRYPTION_KEYS: 's1:BBBB',
    });
    // One proxy in front (Caddy): the client is the address it appended to X-Forwarded-For, never one the client wrote.
    expect(loadConfig({ ...api, PAYLOAD_ENCRYPTION_KEYS: undefined, SECRETS_ENCRYPTION_KEYS: undefined }).trustProxy).toBe(1);
    expect(serviceEnvironment(readCompose(), 'worker', variables).DATABASE_URL).toBe(api.DATABASE_URL);
    expect(() => serviceEnvironment(readCompose(), 'worker', {})).toThrow(/PAYLOAD_ENCRYPTION_KEYS/);
    expect(() => serviceEnvironment(readCompose(), 'api', { PAYLOAD_ENCRYPTION_KEYS: 'k1:AAAA' })).toThrow(/SECRETS_ENCRYPTION_KEYS/);
  });
});

