import { useState } from 'react';
import type { Return } from './api';

export type Answer = 'connect' | 'deny';

/**
 * The person's answer to the app, connect or deny: one at a time, and once the server took it the browser goes
 * back to the app, so the buttons stay disabled while it leaves. A refusal leaves them free to try again.
 */
export function useAnswer() {
  const [pending, setPending] = useState<Answer>();
  const [returning, setReturning] = useState(false);
  const [error, setError] = useState<unknown>();

  async function answer(kind: Answer, send: () => Promise<Return>) {
    if (pending) return;
    setPending(kind);
    setError(undefined);
    try {
      const { redirect_to } = await send();
      setReturning(true);
      window.location.assign(redirect_to);
    } catch (failure) {
      setError(failure);
      setPending(undefined);
    }
  }

  return { pending, returning, error, setError, answer };
}
