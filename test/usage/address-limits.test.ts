import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { passkeySignInLimits, passwordSignInLimits } from '../../api/console/session-routes';
import { oauthRequestLimits } from '../../api/oauth/plugin';
import { connectDatabase, type Database } from '../../db/database';
import { throttleKeys } from '../../domain/identity/sign-in-throttle';
import { loadConfig } from '../../runtime/config';
import { json, publicUrl, startHarness, type Harness } from '../support/harness';
import { statuses } from '../support/limits';

// The per-address limits of the routes anyone may call, counted in PostgreSQL: two apps on one database (two api
// processes behind one proxy) admit together exactly what one would, and the address counted is the one the trusted
// proxy saw, whatever the client wrote into X-Forwarded-For. deploy/rehearsal/journeys.ts proves the same through
// the deployment's Caddy, in front of two apis.

let h: Harness;
let second: FastifyInstance;
let secondDb: Database;
/** Both apps count under one namespace, as every api of a deployment does. */
const namespace = `address-limits-${process.pid}-${Date.now()}:`;
let sequence = 0;
/** An address of its own for each test (TEST-NET-2), so that no test spends another's window. */
const nextAddress = () => `198.51.100.${++sequence}`;

beforeAll(async () => {
  // TRUST_PROXY=1, read as the api reads it: one proxy in front, as in docker-compose.yml.
  const trustProxy = loadConfig({ TRUST_PROXY: '1' }).trustProxy;
  h = await startHarness({ trustProxy, addressLimitsNamespace: namespace });
  // Another app with its own pool of connections, as another api process would be.
  secondDb = connectDatabase(inject('databaseUrl'), { maxConnections: 10 });
  second = await buildApp({
    db: secondDb,
    gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }),
    publicUrl,
    logLevel: 'silent',
    trustProxy,
    addressLimitsNamespace: namespace,
    consoleDir: inject('consoleDir'),
    secrets: h.secrets,
  });
});

afterAll(async () => {
  await second?.close();
  await secondDb?.close();
  await h?.close();
});

/** `count` requests at once, every other one to the second app. */
const burst = (count: number, request: (i: number) => InjectOptions): Promise<LightMyRequestResponse[]> =>
  Promise.all(Array.from({ length: count }, (_, i) => (i % 2 ? second : h.app).inject(request(i))));

describe('two apis on one database', () => {
  it('admit exactly the limit of passkey sign-ins from one address together', async () => {
    const from = nextAddress();
    const answers = await burst(45, () => ({ method: 'POST', url: '/console/api/session/passkey-options', remoteAddress: from }));
    expect(statuses(answers)).toEqual({ 200: passkeySignInLimits.perMinute, 429: 45 - passkeySignInLimits.perMinute });
    const refused = answers.find((answer) => answer.statusCode === 429)!;
    expect(json(refused).error.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-ratelimit-limit']).toBe(String(passkeySignInLimits.perMinute));
    // Another address has a window of its own.
    expect((await second.inject({ method: 'POST', url: '/console/api/session/passkey-options', remoteAddress: nextAddress() })).statusCode).toBe(200);
  });

  it('hear exactly the limit of password sign-ins from one address together; the rest are refused before any password is hashed', async () => {
    const from = nextAddress();
    const slug = h.taskQueue;
    const emails = Array.from({ length: 40 }, (_, i) => `guess-${i}@flood.test`);
    const answers = await burst(40, (i) => ({
      method: 'POST',
      url: '/console/api/session',
      payload: { organization: slug, email: emails[i], password: 'a flood of guesses' },
      remoteAddress: from,
    }));
    expect(statuses(answers)).toEqual({ 401: passwordSignInLimits.perMinute, 429: 40 - passwordSignInLimits.perMinute });
    const refused = answers.find((answer) => answer.statusCode === 429)!;
    expect(json(refused).error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('sign-in attempts from this address') });
    // Only the heard ones reached the sign-in throttle, which counts an attempt before its password is hashed.
    const keys = emails.map((email) => throttleKeys({ orgSlug: slug, email }, from).pair);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM sign_in_throttles WHERE key = ANY($1)', [keys]);
    expect(rows[0].n).toBe(passwordSignInLimits.perMinute);
  });

  it('admit exactly the limit of OAuth client registrations from one address together', async () => {
    const from = nextAddress();
    const over = 5;
    const answers = await burst(oauthRequestLimits.registrationsPerMinute + over, () => ({
      method: 'POST',
      url: '/oauth/register',
      headers: { 'content-type': 'application/json' },
      payload: { client_name: 'not a valid registration' },
      remoteAddress: from,
    }));
    const refused = answers.filter((answer) => answer.statusCode === 429);
    expect(refused).toHaveLength(over);
    expect(answers.filter((answer) => answer.statusCode !== 429).every((answer) => answer.statusCode === 400)).toBe(true);
  });
});

describe('TRUST_PROXY=1', () => {
  it("counts a request under the address its proxy appended to X-Forwarded-For, never the ones the client wrote", async () => {
    const proxied = nextAddress();
    const limit = passkeySignInLimits.perMinute;
    const answers: number[] = [];
    for (let i = 0; i <= limit; i++) {
      const answer = await (i % 2 ? second : h.app).inject({
        method: 'POST',
        url: '/console/api/session/passkey-options',
        headers: { 'x-forwarded-for': `1.2.3.${i + 1}, ${proxied}` },
      });
      answers.push(answer.statusCode);
    }
    expect(answers.slice(0, limit).every((status) => status === 200)).toBe(true);
    expect(answers[limit]).toBe(429);
    const { rows } = await h.db.query('SELECT key, count FROM address_counters WHERE key LIKE $1', [`${namespace}%`]);
    expect(rows).toContainEqual({ key: `${namespace}POST /console/api/session/passkey-options ${proxied}`, count: limit + 1 });
    expect(rows.filter((row) => String(row.key).includes(' 1.2.3.'))).toEqual([]);
  });

  it('counts a client that reaches the api from a public address, past the proxy, under its own address, whatever it writes', async () => {
    const direct = '203.0.113.7';
    const written = nextAddress();
    const answer = await h.app.inject({
      method: 'POST',
      url: '/console/api/session/passkey-options',
      remoteAddress: direct,
      headers: { 'x-forwarded-for': written },
    });
    expect(answer.statusCode).toBe(200);
    const { rows } = await h.db.query('SELECT key FROM address_counters WHERE key LIKE $1', [`${namespace}%`]);
    expect(rows.map((row) => row.key)).toContain(`${namespace}POST /console/api/session/passkey-options ${direct}`);
    expect(rows.filter((row) => String(row.key).endsWith(` ${written}`))).toEqual([]);
  });
});
