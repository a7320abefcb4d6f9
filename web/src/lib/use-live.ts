import { useCallback, useEffect, useRef } from 'react';

export type LiveTopic = 'reviews' | 'calls' | 'memories';

/** How a page fetches: `background` when it refreshes by itself (not the person's activity). */
export interface Refresh {
  background: boolean;
}

/** How long a page waits before opening a stream that the server refused (the stream's own `retry:`). */
const reopenAfterMs = 3000;

/**
 * Calls `onChange` whenever the server says a topic changed (server-sent events from /console/api/live), and for
 * every topic whenever the stream (re)connects, so nothing that changed while it was away is missed. A hidden
 * tab lets go of its stream (browsers allow few connections per site) and catches up when shown again.
 */
export function useLive(topics: LiveTopic[], onChange: (topic: LiveTopic) => void): void {
  const latest = useRef(onChange);
  useEffect(() => {
    latest.current = onChange;
  }, [onChange]);
  const key = topics.join(',');
  useEffect(() => {
    const watched = key.split(',') as LiveTopic[];
    let source: EventSource | undefined;
    let reopen: number | undefined;
    const everything = () => {
      for (const topic of watched) latest.current(topic);
    };
    const open = () => {
      if (source) return;
      source = new EventSource('/console/api/live');
      source.addEventListener('ready', everything);
      for (const topic of watched) source.addEventListener(topic, () => latest.current(topic));
      source.addEventListener('error', () => {
        // A dropped stream reconnects by itself, but an answer that is not a stream (a stopping api's 503, a
        // proxy's 502, a 401) ends it for good: fetch now (a 401 then signs the person out), and open another.
        if (source?.readyState !== EventSource.CLOSED) return;
        close();
        everything();
        reopen = window.setTimeout(open, reopenAfterMs);
      });
    };
    const close = () => {
      window.clearTimeout(reopen);
      source?.close();
      source = undefined;
    };
    const onVisibility = () => (document.hidden ? close() : open());
    if (!document.hidden) open();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      document.removeEventListener('visibilitychange', onVisibility);
      close();
    };
  }, [key]);
}

/** Keeps only the newest of overlapping requests: an older answer arriving late is dropped. */
export function useLatest() {
  const counter = useRef(0);
  return useCallback(<T,>(promise: Promise<T>, use: (value: T) => void, fail: (error: unknown) => void) => {
    const mine = ++counter.current;
    promise.then(
      (value) => mine === counter.current && use(value),
      (error: unknown) => mine === counter.current && fail(error),
    );
  }, []);
}
