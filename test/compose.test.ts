import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { searchAttributeNames } from '../runtime/search-attributes';

// The compose deployment is for our users; these machines have no Docker engine to run it (the README says what
// was and was not run). What can be checked without one is checked here: it parses, every service is on a
// maintained image, the order of start-up holds, and the setup scripts it mounts exist and agree with the code.

const root = new URL('../', import.meta.url);
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
}

describe('docker-compose.yml', () => {
  const { services } = compose;

  it('runs Temporal from its server image with a schema step and a setup step, none from the deprecated auto-setup', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'codec', 'postgres', 'proxy', 'temporal', 'temporal-admin-tools', 'temporal-schema', 'temporal-ui', 'worker']);
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
    const keys = '${PAYLOAD_ENCRYPTION_KEYS:?set PAYLOAD_ENCRYPTION_KEYS, e.g. export PAYLOAD_ENCRYPTION_KEYS=$$(npx gatehouse temporal payload-key)}';
    for (const name of ['api', 'worker', 'codec']) expect(services[name]!.environment!.PAYLOAD_ENCRYPTION_KEYS, name).toBe(keys);
    expect(services.codec!.command).toEqual(['temporal', 'codec']);
    expect(services.codec!.ports).toEqual(['127.0.0.1:${CODEC_PORT:-8234}:8234']);
    expect(services.codec!.environment).toMatchObject({ CODEC_HOST: '0.0.0.0', CODEC_PORT: 8234, TEMPORAL_UI_URL: 'http://localhost:${TEMPORAL_UI_PORT:-8233}' });
    expect(services['temporal-ui']!.environment!.TEMPORAL_CODEC_ENDPOINT).toBe('http://localhost:${CODEC_PORT:-8234}');
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
});
