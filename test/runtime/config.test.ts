import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config';
import { grpcCompressionFor } from '../../runtime/temporal';

describe('configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', publicUrl: 'http://localhost:3000', reviewExpiryMs: 7 * 24 * 3600 * 1000 });
    expect(config.temporal).toMatchObject({ namespace: 'default', taskQueue: 'gatehouse', devPort: 7233, uiPort: 8233 });
  });

  it.each([
    ['30m', 30 * 60 * 1000],
    ['12h', 12 * 3600 * 1000],
    ['30d', 30 * 24 * 3600 * 1000],
    ['90000', 90_000],
  ])('reads REVIEW_EXPIRY=%s', (value, ms) => {
    expect(loadConfig({ REVIEW_EXPIRY: value }).reviewExpiryMs).toBe(ms);
  });

  it.each([['31d'], ['soon'], ['0']])('refuses REVIEW_EXPIRY=%s with the variable named', (value) => {
    expect(() => loadConfig({ REVIEW_EXPIRY: value })).toThrowError(ConfigError);
    expect(() => loadConfig({ REVIEW_EXPIRY: value })).toThrowError(/REVIEW_EXPIRY/);
  });

  it('retention: units required, a floor under each, off keeps for good; metrics ports', () => {
    const day = 24 * 3600 * 1000;
    expect(loadConfig({}).retention).toEqual({ callLogMs: 90 * day, reviewsMs: 365 * day });
    expect(loadConfig({ CALL_LOG_RETENTION: '14d', REVIEW_RETENTION: 'off' }).retention).toEqual({ callLogMs: 14 * day, reviewsMs: undefined });
    for (const [name, value] of [
      ['CALL_LOG_RETENTION', '90'],
      ['CALL_LOG_RETENTION', '12h'],
      ['REVIEW_RETENTION', '365'],
      ['REVIEW_RETENTION', '30d'],
      ['REVIEW_RETENTION', 'soon'],
    ] as const) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrowError(new RegExp(name));
    }
    expect(loadConfig({}).metrics).toEqual({ host: '127.0.0.1', port: undefined, temporalPort: 9466 });
    expect(loadConfig({ METRICS_PORT: 'off', TEMPORAL_METRICS_PORT: 'off', METRICS_HOST: '0.0.0.0' }).metrics).toEqual({ host: '0.0.0.0', port: 'off', temporalPort: 'off' });
  });

  it('console settings: sessions, a trusted proxy, and who sees Temporal Web UI links (nobody unless named)', () => {
    const defaults = loadConfig({});
    expect(defaults.sessions).toEqual({ idleMs: 2 * 60 * 60 * 1000, lifetimeMs: 12 * 60 * 60 * 1000 });
    expect(defaults.trustProxy).toBe(false);
    expect(defaults.temporal.uiRoles).toEqual([]);
    const set = loadConfig({ SESSION_IDLE_TIMEOUT: '30m', SESSION_MAX_AGE: '1d', TRUST_PROXY: '10.0.0.1, 10.0.0.2', TEMPORAL_UI_ROLES: 'owner, admin' });
    expect(set.sessions).toEqual({ idleMs: 30 * 60 * 1000, lifetimeMs: 24 * 60 * 60 * 1000 });
    expect(set.trustProxy).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(set.temporal.uiRoles).toEqual(['owner', 'admin']);
    expect(() => loadConfig({ TEMPORAL_UI_ROLES: 'owner,boss' })).toThrowError(/TEMPORAL_UI_ROLES: unknown roles: boss/);
    expect(() => loadConfig({ SESSION_IDLE_TIMEOUT: 'soon' })).toThrowError(/SESSION_IDLE_TIMEOUT/);
  });

  it("TRUST_PROXY takes a hop count or the proxies' addresses, and refuses true with what to write instead", () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: ' 2 ' }).trustProxy).toBe(2);
    for (const off of ['', 'false', '0']) expect(loadConfig({ TRUST_PROXY: off }).trustProxy, off).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,fd00::/8, ::1, uniquelocal' }).trustProxy).toEqual(['10.0.0.5', '10.1.0.0/16', 'fd00::/8', '::1', 'uniquelocal']);
    // The client writes the left-most X-Forwarded-For address itself: true would make it the client's.
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrowError(/TRUST_PROXY: true is refused: it would take the left-most X-Forwarded-For address, which the client writes itself/);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrowError(/TRUST_PROXY=1 for one, as docker-compose.yml does\) or their addresses/);
    for (const wrong of ['yes', '10.0.0.300', '10.0.0.0/33', 'proxy.internal', '11']) {
      expect(() => loadConfig({ TRUST_PROXY: wrong }), wrong).toThrowError(/TRUST_PROXY/);
    }
  });

  it('RATE_LIMITS is on unless turned off (for the benchmark), and takes nothing else', () => {
    expect(loadConfig({}).rateLimits).toBe(true);
    expect(loadConfig({ RATE_LIMITS: 'on' }).rateLimits).toBe(true);
    expect(loadConfig({ RATE_LIMITS: 'off' }).rateLimits).toBe(false);
    expect(() => loadConfig({ RATE_LIMITS: 'no' })).toThrowError(/RATE_LIMITS/);
  });

  it("Temporal's connection and worker settings: gzip except over loopback, the SDK's pollers unless given", () => {
    expect(loadConfig({}).temporal).toMatchObject({ grpcCompression: 'auto', workflowTaskPollers: undefined, nonStickyPollRatio: undefined, preloadWorkflowModules: false });
    expect(
      loadConfig({ TEMPORAL_GRPC_COMPRESSION: 'gzip', TEMPORAL_WORKFLOW_TASK_POLLERS: '20', TEMPORAL_NON_STICKY_POLL_RATIO: '0.2', TEMPORAL_PRELOAD_WORKFLOW_MODULES: 'on' })
        .temporal,
    ).toMatchObject({ grpcCompression: 'gzip', workflowTaskPollers: 20, nonStickyPollRatio: 0.2, preloadWorkflowModules: true });
    for (const [name, value] of [
      ['TEMPORAL_GRPC_COMPRESSION', 'brotli'],
      ['TEMPORAL_WORKFLOW_TASK_POLLERS', '1'],
      ['TEMPORAL_NON_STICKY_POLL_RATIO', '2'],
      ['TEMPORAL_PRELOAD_WORKFLOW_MODULES', 'yes'],
    ] as const) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrowError(new RegExp(name));
    }
    for (const address of ['127.0.0.1:7233', 'localhost:7233', '[::1]:7233', '127.0.1.5:7233', 'temporal.localhost:7233']) {
      expect(grpcCompressionFor('auto', address), address).toEqual({ codec: 'none' });
    }
    for (const address of ['10.0.0.2:7233', 'temporal:7233', 'temporal.example.com:7233', '[fd00::2]:7233']) {
      expect(grpcCompressionFor('auto', address), address).toEqual({ codec: 'gzip' });
    }
    expect(grpcCompressionFor('gzip', '127.0.0.1:7233')).toEqual({ codec: 'gzip' });
    expect(loadConfig({}).databasePreparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' }).databasePreparedStatements).toBe(false);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'no' })).toThrowError(/DATABASE_PREPARED_STATEMENTS/);
    expect(grpcCompressionFor('none', 'temporal:7233')).toEqual({ codec: 'none' });
  });

  it('refuses a port that is not one', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrowError(/PORT/);
  });
});
