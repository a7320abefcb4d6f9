import { useEffect, useRef } from 'react';

export type LiveTopic = 'reviews' | 'calls' | 'memories';

/**
 * Calls `onChange` whenever the server says a topic changed (server-sent events from /console/api/live); the
 * page then fetches what it shows again. The browser reconnects by itself after a drop.
 */
export function useLive(topics: LiveTopic[], onChange: (topic: LiveTopic) => void): void {
  const latest = useRef(onChange);
  useEffect(() => {
    latest.current = onChange;
  }, [onChange]);
  const key = topics.join(',');
  useEffect(() => {
    const source = new EventSource('/console/api/live');
    const listeners = key.split(',').map((topic) => {
      const listener = () => latest.current(topic as LiveTopic);
      source.addEventListener(topic, listener);
      return [topic, listener] as const;
    });
    return () => {
      for (const [topic, listener] of listeners) source.removeEventListener(topic, listener);
      source.close();
    };
  }, [key]);
}
