/**
 * A button for what cannot be undone (revoke, delete): pressed, it gives way to the confirmation, which takes the
 * keyboard's focus, and a Cancel. The page says which one is open, so that opening another closes it.
 */
export function ConfirmButton(props: {
  /** The button's text, and what screen readers hear of it (naming the record). */
  label: string;
  accessibleLabel: string;
  /** The confirmation's text: what happens, said in full. */
  confirmLabel: string;
  open: boolean;
  onOpen: () => void;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const { label, accessibleLabel, confirmLabel, open, onOpen, onCancel, onConfirm } = props;
  if (!open) {
    return (
      <button type="button" className="button secondary small" aria-label={accessibleLabel} onClick={onOpen}>
        {label}
      </button>
    );
  }
  return (
    <>
      {/* Focus moves to the confirmation, which replaces the button the person just pressed. */}
      <button type="button" className="button danger small" autoFocus onClick={onConfirm}>
        {confirmLabel}
      </button>
      <button type="button" className="button secondary small" onClick={onCancel}>
        Cancel
      </button>
    </>
  );
}
