import { api } from '../../lib/api';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { makePasskey } from '../../lib/passkeys';

/** One of the signed-in person's passkeys (the console's door answers these, not the catalog). */
export interface Passkey {
  id: string;
  name: string;
  credential_id: string;
  transports: string[];
  backed_up: boolean;
  created_at: string;
  last_used_at: string | null;
}

const passkeyPath = (id: string) => `/passkeys/${encodeURIComponent(id)}`;

export const passkeysApi = {
  list: () => api.get<Passkey[]>('/passkeys'),
  /**
   * The service's options, the authenticator's new passkey, then the service checks and keeps it: with the person's
   * current password, which a session alone does not know.
   */
  async register(name: string, password: string): Promise<Passkey> {
    const options = await api.post<PublicKeyCredentialCreationOptionsJSON>('/passkeys/registration-options');
    const response = await makePasskey(options);
    return api.post<Passkey>('/passkeys', { ...(name.trim() ? { name: name.trim() } : {}), password, response });
  },
  rename: (id: string, name: string) => api.patch<Passkey>(passkeyPath(id), { name }),
  /** Removing one takes the current password too. */
  remove: (id: string, password: string) => api.delete<{ removed: string }>(passkeyPath(id), { password }),
};
