import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { connectDatabase } from '../../db/database';
import { publicUrl, startHarness, type Harness } from '../support/harness';

let h: Harness;
const apps: FastifyInstance[] = [];
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  for (const app of apps) await app.close();
  for (const close of closers) await close();
  await h.close();
});

async function appWith(overrides: Partial<Parameters<typeof buildApp>[0]>): Promise<FastifyInstance> {
  const app = await buildApp({ db: h.db, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl, logLevel: 'silent', secrets: h.secrets, ...overrides });
  apps.push(app);
  return app;
}

describe('liveness and readiness', () => {
  it('/healthz answers while the process is up, /readyz once PostgreSQL, Temporal and a worker are there', async () => {
    const live = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });

    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', temporal: 'ok' } });
  });

  it('is not ready while no worker polls its task queue, and is ready once one does', async () => {
    await h.stopWorker();
    try {
      // The stopped worker's polls are still in Temporal's list for a while: a queue nobody ever polled shows it.
      const app = await appWith({ gate: createGateClient(h.temporal, { taskQueue: `${h.taskQueue}-unpolled` }) });
      const answer = await app.inject({ method: 'GET', url: '/readyz' });
      expect(answer.statusCode).toBe(503);
      expect(answer.json()).toMatchObject({
        error: {
          code: 'unavailable',
          message: `Not ready: No worker polls the task queue ${h.taskQueue}-unpolled`,
          details: { checks: { database: 'ok', temporal: `No worker polls the task queue ${h.taskQueue}-unpolled` } },
        },
      });
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await h.startWorker();
    }
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('is not ready when Temporal or PostgreSQL does not answer, and says which; still alive', async () => {
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const unreachable = new Client({ connection });
    await connection.close();
    const noTemporal = await appWith({ gate: createGateClient(unreachable, { taskQueue: h.taskQueue }) });
    const withoutTemporal = await noTemporal.inject({ method: 'GET', url: '/readyz' });
    expect(withoutTemporal.statusCode).toBe(503);
    expect(withoutTemporal.json().error.details.checks).toMatchObject({ database: 'ok', temporal: expect.stringMatching(/^Temporal does not answer: /) });

    // A port where nothing listens.
    const nowhere = connectDatabase('postgres://postgres@127.0.0.1:9/postgres', { maxConnections: 1 });
    closers.push(() => nowhere.close());
    const noDatabase = await appWith({ db: nowhere });
    const withoutDatabase = await noDatabase.inject({ method: 'GET', url: '/readyz' });
    expect(withoutDatabase.statusCode).toBe(503);
    expect(withoutDatabase.json().error.details.checks).toMatchObject({ database: expect.stringMatching(/^PostgreSQL does not answer: /), temporal: 'ok' });
    expect((await noDatabase.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('stopping', () => {
  it('refuses a request that reaches a stopping api in the envelope (503 unavailable) and closes its connection', async () => {
    let release!: () => void;
    const held = new Promise<undefined>((resolve) => (release = () => resolve(undefined)));
    const gate = createGateClient(h.temporal, { taskQueue: h.taskQueue });
    const app = await appWith({ gate: { ...gate, notReady: () => held } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    // One request holds the api open as it stops (a readiness check that waits); another, begun before the stop
    // and finished after it, reaches the stopping api, as one on a kept-alive connection behind a proxy does.
    const holding = rawRequest(port, 'GET /readyz HTTP/1.1\r\nHost: gatehouse.test\r\nConnection: close\r\n\r\n');
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    // The api ends the connection after its answer.
    const ended = new Promise((resolve) => socket.once('end', resolve));
    socket.write('GET /api/v1/me HTTP/1.1\r\nHost: gatehouse.test\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closed = app.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.write('\r\n');
    await ended;
    release();
    expect((await holding).split(' ')[1]).toBe('200');
    await closed;
    expect(received.split(' ')[1]).toBe('503');
    expect(received).toMatch(/connection: close/i);
    const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)) as { success: boolean; error: { code: string } };
    expect(body).toMatchObject({ success: false, error: { code: 'unavailable' } });
  });
});

/** Sends raw bytes on a connection of its own; resolves with all the server sent back once it closes. */
function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.once('end', () => resolve(received));
    socket.once('error', reject);
  });
}
