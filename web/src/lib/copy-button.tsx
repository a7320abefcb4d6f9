import { useState } from 'react';

/** Copies a secret shown once; says so for screen readers too. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<boolean | undefined>(undefined);
  return (
    <>
      <button
        type="button"
        className="button secondary"
        onClick={() => {
          navigator.clipboard.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          );
        }}
      >
        {label}
      </button>
      <span role="status" className="hint">
        {copied === true ? 'Copied.' : copied === false ? 'Copy failed: select the text and copy it.' : ''}
      </span>
    </>
  );
}
