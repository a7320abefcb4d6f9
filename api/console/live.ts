import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { resumeSession, type SessionRules } from '../../domain/identity/sessions';
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
  sessions: SessionRules;
  cookie: SessionCookie;
  /** How often a watched organization is polled. */
  intervalMs?: number;
}

type Listener = (topics: LiveTopic[]) => void;

interface Watched {
  orgId: string;
  listeners: Set<Listener>;
  /** The fingerprint last read; none before the first read, or while every read so far has failed. */
  stamps?: Record<LiveTopic, string>;
  /** The first read, which the pages that start the watch wait for (see `watch`). */
  first: Promise<void>;
  timer: NodeJS.Timeout;
  busy: boolean;
  failed: boolean;
}

/** One poller per organization that someone watches in this process, however many pages watch it. */
function createWatcher(db: Database, intervalMs: number, log: (error: unknown) => void) {
  const watched = new Map<string, Watched>();

  async function poll(entry: Watched) {
    if (entry.busy) return;
    entry.busy = true;
    try {
      const stamps = await changeStamps(db, entry.orgId);
      // After failed reads anything may have changed since the pages fetched: they fetch everything again.
      const changed = entry.stamps ? liveTopics.filter((topic) => stamps[topic] !== entry.stamps![topic]) : entry.failed ? [...liveTopics] : [];
      entry.stamps = stamps;
      entry.failed = false;
      if (changed.length) for (const listener of entry.listeners) listener(changed);
    } catch (error) {
      // A dropped connection costs one beat; the next poll tries again.
      entry.failed = true;
      log(error);
    } finally {
      entry.busy = false;
    }
  }

  return {
    /**
     * Calls `listener` with the topics that change from now on. Resolves once the organization's fingerprint has
     * been read, so that a page told it may fetch only then (the `ready` event) misses nothing: a change committed
     * before that read is in what it fetches, one after it moves the fingerprint.
     */
    async watch(orgId: string, listener: Listener): Promise<() => void> {
      let entry = watched.get(orgId);
      if (!entry) {
        const created: Watched = { orgId, listeners: new Set(), first: Promise.resolve(), timer: setInterval(() => void poll(created), intervalMs).unref(), busy: false, failed: false };
        created.first = poll(created);
        watched.set(orgId, created);
        entry = created;
      }
      entry.listeners.add(listener);
      const unwatch = () => {
        const current = watched.get(orgId);
        if (!current) return;
        current.listeners.delete(listener);
        if (current.listeners.size === 0) {
          clearInterval(current.timer);
          watched.delete(orgId);
        }
      };
      await entry.first;
      return unwatch;
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
  /** Each open stream's way to stop: its timers, its watch, and the response. */
  const streams = new Set<() => void>();
  // Open streams would hold the server open: they end first, and the pages reconnect to another process.
  app.addHook('preClose', async () => {
    for (const stop of [...streams]) stop();
    watcher.close();
  });

  app.get('/live', async (request, reply) => {
    // Watching is no activity of the person's: an open tab still goes idle.
    const stillSignedIn = () => resumeSession(options.db, options.cookie.read(request), options.sessions, { touch: false });
    const resumed = await stillSignedIn();
    if (!resumed) return reply.status(401).send(errorBody(new AppError('unauthorized', 'Sign in first: there is no session, or it has ended')));
    const orgId = resumed.caller.organization.id;

    reply.hijack();
    const stream = reply.raw;
    // The page may have gone while the session was read: then there is nothing to watch for.
    if (request.raw.destroyed || stream.destroyed) {
      stream.end();
      return;
    }
    stream.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    stream.write('retry: 3000\n\n');
    const send = (event: string, data: unknown) => stream.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

    // Watching starts now; `ready`, which tells the page to fetch everything, waits until the fingerprint that
    // later changes are told against has been read, or a change committed between the page's fetch and that
    // read would never be told.
    const watching = watcher.watch(orgId, (topics) => {
      for (const topic of topics) send(topic, {});
    });
    const heartbeat = setInterval(() => {
      void stillSignedIn().then(
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
    heartbeat.unref();
    const stop = () => {
      if (!streams.delete(stop)) return;
      clearInterval(heartbeat);
      void watching.then((unwatch) => unwatch());
      if (!stream.writableEnded) stream.end();
    };
    streams.add(stop);
    request.raw.once('close', stop);
    stream.once('close', stop);

    await watching;
    if (streams.has(stop)) send('ready', { topics: liveTopics });
  });
}
