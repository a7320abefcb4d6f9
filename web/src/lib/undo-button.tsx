import { useState } from 'react';
import { api } from './api';
import { FormError } from './form-error';

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

/**
 * Undo of an applied write, for people who decide reviews: asks once more (what it does), then takes the write
 * back at once. A refusal (the record changed since, the window passed) is said beside it.
 */
export function UndoButton({ write, what, onUndone }: { write: string; what: string; onUndone: (undone: Undone) => void }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<Undone>();

  async function undo() {
    setBusy(true);
    setError(undefined);
    try {
      const undone = await api.post<Undone>(`/v1/writes/${encodeURIComponent(write)}/undo`);
      setDone(undone);
      setOpen(false);
      onUndone(undone);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  if (done) return <span role="status">Undone. {outcomeNames[done.outcome]}</span>;
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
