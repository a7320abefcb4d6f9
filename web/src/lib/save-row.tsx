/** A form's save button and, beside it, what the last save did (announced to screen readers). */
export function SaveRow({ label, busyLabel = 'Saving…', busy, status }: { label: string; busyLabel?: string; busy: boolean; status: string | undefined }) {
  return (
    <div className="row save-row">
      <button type="submit" className="button" disabled={busy}>
        {busy ? busyLabel : label}
      </button>
      <p role="status" className="hint">
        {status ?? ''}
      </p>
    </div>
  );
}
