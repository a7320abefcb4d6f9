import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
  WebAuthnError,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/browser';
import { ApiError } from './api';

// The browser's side of passkeys (WebAuthn): asking the person's authenticator to make one or to sign, and
// saying in words why it did not. Passkeys work only in a secure context (https, or http://localhost).

export type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON };

/** Where the person's passkeys are managed, as messages name it. */
export const passkeysPage = '/settings/passkeys';

function unsupported(): ApiError | undefined {
  if (browserSupportsWebAuthn() && window.isSecureContext) return undefined;
  return new ApiError(0, 'passkeys_unavailable', 'This browser cannot use passkeys here: open the console over https (or at localhost) in a browser that supports them.');
}

/** A failure of the ceremony as an ApiError the forms show: cancelled, known already, or something else. */
function inWords(error: unknown, registering: boolean): ApiError {
  const name = error instanceof WebAuthnError ? ((error.cause as Error | undefined)?.name ?? error.name) : (error as Error | undefined)?.name;
  if (error instanceof WebAuthnError && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') {
    return new ApiError(0, 'passkey_exists', 'This authenticator holds one of your passkeys already: use that one, or another authenticator.');
  }
  if (name === 'NotAllowedError' || name === 'AbortError') {
    return new ApiError(0, 'passkey_cancelled', registering ? 'No passkey was made: it was cancelled, or the time ran out.' : 'Your passkey was not used: it was cancelled, or the time ran out. Try again.');
  }
  return new ApiError(0, 'passkey_unavailable', `The browser could not use a passkey: ${(error as Error | undefined)?.message ?? 'unknown error'}`);
}

/** Asks the authenticator to make a passkey with the service's options. */
export async function makePasskey(options: PublicKeyCredentialCreationOptionsJSON): Promise<RegistrationResponseJSON> {
  const refusal = unsupported();
  if (refusal) throw refusal;
  try {
    return await startRegistration({ optionsJSON: options });
  } catch (error) {
    throw inWords(error, true);
  }
}

/** Asks the authenticator to sign the service's challenge with one of the person's passkeys. */
export async function signWithPasskey(options: PublicKeyCredentialRequestOptionsJSON): Promise<AuthenticationResponseJSON> {
  const refusal = unsupported();
  if (refusal) throw refusal;
  try {
    return await startAuthentication({ optionsJSON: options });
  } catch (error) {
    throw inWords(error, false);
  }
}

/** A passkey's assertion over a verdict's challenge, as an approval (or a decision link's confirm) carries it. */
export interface SignedVerdict {
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
  signed_at: string;
}

/**
 * What the service asks a passkey to sign for a verdict: the challenge, its time, and the person's passkeys (none
 * named where the asker is not known to be the person: a decision link's page).
 */
export interface VerdictChallenge {
  challenge: string;
  signed_at: string;
  rp_id: string;
  allow_credentials: { id: string; transports: string[] }[];
}

/**
 * Has one of the person's passkeys sign a verdict's challenge. Signed in (`named`), the challenge lists their
 * passkeys, and a person with none is told to register one first (`no_passkey`), where they manage their passkeys;
 * from a decision link (`discoverable`), it lists none and the authenticator offers the ones it holds for this site.
 */
export async function signVerdict(asked: VerdictChallenge, passkeys: 'named' | 'discoverable' = 'named'): Promise<SignedVerdict> {
  if (passkeys === 'named' && asked.allow_credentials.length === 0) {
    throw new ApiError(0, 'no_passkey', 'This organization needs every approval signed with a passkey, and you have none. Register a passkey in Settings → Passkeys first.');
  }
  const signed = await signWithPasskey({
    challenge: asked.challenge,
    rpId: asked.rp_id,
    ...(passkeys === 'named'
      ? { allowCredentials: asked.allow_credentials.map((credential) => ({ id: credential.id, type: 'public-key' as const, transports: credential.transports as AuthenticatorTransport[] })) }
      : {}),
    userVerification: 'required',
    timeout: 120_000,
  });
  return {
    credential_id: signed.id,
    authenticator_data: signed.response.authenticatorData,
    client_data_json: signed.response.clientDataJSON,
    signature: signed.response.signature,
    signed_at: asked.signed_at,
  };
}
