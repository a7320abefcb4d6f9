import { useState } from 'react';
import { api, ApiError } from './api';
import type { Data } from './api-types';
import { FormError } from './form-error';
import { signVerdict } from './passkeys';
import { useSignedIn } from './session';

/** What an undo answers: the write taken back, and the undo's id. */
export interface Undone {
  write: string;
  /** removed, reverted, restored; undone for a changeset (every item it applied). */
  outcome: 'removed' | 'reverted' | 'restored' | 'undone';
  undone_by: string;
}

const outcomeNames = {
  removed: 'The created record was removed.',
  reverted: 'The record is back as it was.',
  restored: 'The deleted record is back.',
  undone: 'Every record the changeset wrote is back as it was.',
} as const;

/** What the person is told once a write is taken back. */
export const undoneSentence = (undone: Undone) => `Undone. ${outcomeNames[undone.outcome]}`;

/**
 * A person's undo, signed first with their passkey where the organization needs approvals signed (`signed`); one
 * sent unsigned that the service refuses with passkey_required (the setting changed since the page loaded) is
 * signed and sent again.
 */
async function undoAt(write: string, signed: boolean): Promise<Undone> {
  const path = `/v1/writes/${encodeURIComponent(write)}/undo`;
  const sign = async () => ({ passkey: await signVerdict(await api.post<Data<'writes_undo_passkey_challenge'>>(`${path}/passkey-challenge`)) });
  if (signed) return api.post<Undone>(path, await sign());
  try {
    return await api.post<Undone>(path);
  } catch (failure) {
    if (failure instanceof ApiError && failure.code === 'passkey_required') return api.post<Undone>(path, await sign());
    throw failure;
  }
}

/**
 * Undo of an applied write, for people who decide reviews: asks once more (what it does), then takes the write
 * back at once. A refusal (the record changed since, the window passed) is said beside it.
 */
export function UndoButton({
  write,
  what,
  onUndone,
  saidByPage = false,
}: {
  write: string;
  what: string;
  onUndone: (undone: Undone) => void;
  /** The page says what was undone (in a status of its own, which outlives this button): nothing is said here. */
  saidByPage?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<Undone>();
  const { organization } = useSignedIn();

  async function undo() {
    setBusy(true);
    setError(undefined);
    try {
      const undone = await undoAt(write, organization.approvals_need_passkey);
      setDone(undone);
      setOpen(false);
      onUndone(undone);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  if (done) return saidByPage ? null : <span role="status">{undoneSentence(done)}</span>;
  return (
    <div className="undo">
      {open ? (
        <>
          <button type="button" className="button danger small" aria-label={`Undo now: ${what}`} autoFocus disabled={busy} onClick={() => void undo()}>
            Undo now
          </button>
          <button type="button" className="button secondary small" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </>
      ) : (
        <button type="button" className="button secondary small" aria-label={`Undo ${what}`} onClick={() => setOpen(true)}>
          Undo
        </button>
      )}
      <FormError error={error} />
    </div>
  );
}
