import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { resumeSession, type SessionPolicy } from '../../domain/identity/sessions';
import { AppError } from '../../domain/kit/errors';
import { changeStamps, liveTopics, type LiveTopic } from '../../domain/usage/changes';
import { errorBody } from '../rest/http';
import type { SessionCookie } from './cookies';

// Live pages: GET /console/api/live is a stream of server-sent events naming what changed (`reviews`, `calls`,
// `memories`); the page then fetches it again through the console's operations, so every answer still goes
// through the call pipeline, its access rules and its tenancy. What changed is learned by polling each watched
// organization's fingerprint once a second: it works across api processes and on the embedded database alike.

export interface LiveOptions {
  db: Database;
  sessions: SessionPolicy;
  cookie: SessionCookie;
  /** How often a watched organization is polled. */
  intervalMs?: number;
}

type Listener = (topics: LiveTopic[]) => void;

/** One poller per organization that someone watches in this process, however many pages watch it. */
function createWatcher(db: Database, intervalMs: number, log: (error: unknown) => void) {
  const watched = new Map<string, { listeners: Set<Listener>; stamps?: Record<LiveTopic, string>; timer: NodeJS.Timeout; busy: boolean }>();

  async function poll(orgId: string) {
    const entry = watched.get(orgId);
    if (!entry || entry.busy) return;
    entry.busy = true;
    try {
      const stamps = await changeStamps(db, orgId);
      const changed = entry.stamps ? liveTopics.filter((topic) => stamps[topic] !== entry.stamps![topic]) : [];
      entry.stamps = stamps;
      if (changed.length) for (const listener of entry.listeners) listener(changed);
    } catch (error) {
      // A dropped connection costs one beat; the next poll tries again.
      log(error);
    } finally {
      entry.busy = false;
    }
  }

  return {
    watch(orgId: string, listener: Listener): () => void {
      let entry = watched.get(orgId);
      if (!entry) {
        entry = { listeners: new Set(), timer: setInterval(() => void poll(orgId), intervalMs), busy: false };
        watched.set(orgId, entry);
        void poll(orgId);
      }
      entry.listeners.add(listener);
      return () => {
        const current = watched.get(orgId);
        if (!current) return;
        current.listeners.delete(listener);
        if (current.listeners.size === 0) {
          clearInterval(current.timer);
          watched.delete(orgId);
        }
      };
    },
    close() {
      for (const entry of watched.values()) clearInterval(entry.timer);
      watched.clear();
    },
  };
}

/** How often a stream says it is alive (proxies close quiet connections), and checks its session still stands. */
const heartbeatMs = 15_000;

export async function liveRoute(app: FastifyInstance, options: LiveOptions): Promise<void> {
  const watcher = createWatcher(options.db, options.intervalMs ?? 1000, (error) => app.log.warn({ err: error }, 'live poll failed'));
  const streams = new Set<{ end(): void }>();
  // Open streams would hold the server open: they end first, and the pages reconnect to another process.
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.end();
    watcher.close();
  });

  app.get('/live', async (request, reply) => {
    const resumed = await resumeSession(options.db, options.cookie.read(request), options.sessions);
    if (!resumed) return reply.status(401).send(errorBody(new AppError('unauthorized', 'Sign in first: there is no session, or it has ended')));
    const orgId = resumed.caller.organization.id;

    reply.hijack();
    const stream = reply.raw;
    stream.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    stream.write('retry: 3000\n\n');
    const send = (event: string, data: unknown) => stream.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('ready', { topics: liveTopics });

    const unwatch = watcher.watch(orgId, (topics) => {
      for (const topic of topics) send(topic, {});
    });
    const heartbeat = setInterval(() => {
      void resumeSession(options.db, options.cookie.read(request), options.sessions).then(
        (still) => {
          if (still) stream.write(': alive\n\n');
          else {
            send('signed_out', {});
            stream.end();
          }
        },
        () => stream.write(': alive\n\n'),
      );
    }, heartbeatMs);
    streams.add(stream);
    const stop = () => {
      clearInterval(heartbeat);
      unwatch();
      streams.delete(stream);
    };
    request.raw.once('close', stop);
    stream.once('close', stop);
  });
}
