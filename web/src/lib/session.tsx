import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, setCsrfToken, whenSignedOut } from './api';
import { signWithPasskey, type PublicKeyCredentialRequestOptionsJSON } from './passkeys';

export type Role = 'owner' | 'admin' | 'reviewer' | 'member';
export type Permission = 'decideReviews' | 'manageKeys' | 'managePeople' | 'editPolicy' | 'seeMemories' | 'readAudit' | 'manageWebhooks';

export interface Session {
  person: { id: string; email: string; name: string | null; role: Role };
  organization: { slug: string; name: string; api_access: boolean; approvals_need_passkey: boolean };
  permissions: Permission[];
  csrf_token: string;
  expires_at: string;
  /** A review's workflow in the Temporal Web UI is here plus its workflow id; null when this role may not see it. */
  workflow_url_prefix: string | null;
}

interface SessionState {
  /** undefined while the first answer is awaited; null when nobody is signed in. */
  session: Session | null | undefined;
  signIn(input: { organization: string; email: string; password: string }): Promise<void>;
  /** Signs in with one of the person's passkeys (the authenticator offers those it holds for this console). */
  signInWithPasskey(): Promise<void>;
  signOut(): Promise<void>;
  refresh(): Promise<void>;
  can(permission: Permission): boolean;
}

const SessionContext = createContext<SessionState | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null | undefined>(undefined);

  const adopt = useCallback((next: Session | null) => {
    setCsrfToken(next?.csrf_token);
    setSession(next);
  }, []);

  /** Asks the server again (after a change of one's own role, say); a failure keeps what is known. */
  const refresh = useCallback(async () => {
    try {
      adopt(await api.get<Session | null>('/session'));
    } catch {
      // The next call will say what is wrong.
    }
  }, [adopt]);

  useEffect(() => {
    whenSignedOut(() => adopt(null));
    api.get<Session | null>('/session').then(adopt, () => adopt(null));
  }, [adopt]);

  const state = useMemo<SessionState>(
    () => ({
      session,
      refresh,
      async signIn(input) {
        adopt(await api.post<Session>('/session', input));
      },
      async signInWithPasskey() {
        const options = await api.post<PublicKeyCredentialRequestOptionsJSON>('/session/passkey-options');
        adopt(await api.post<Session>('/session/passkey', { response: await signWithPasskey(options) }));
      },
      async signOut() {
        try {
          await api.delete('/session');
        } finally {
          adopt(null);
        }
      },
      can: (permission) => session?.permissions.includes(permission) ?? false,
    }),
    [session, refresh, adopt],
  );
  return <SessionContext.Provider value={state}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** The signed-in session, for pages that only render behind sign-in. */
export function useSignedIn(): Session & { can: SessionState['can']; refresh: SessionState['refresh'] } {
  const { session, can, refresh } = useSession();
  if (!session) throw new Error('useSignedIn outside a signed-in page');
  return { ...session, can, refresh };
}
