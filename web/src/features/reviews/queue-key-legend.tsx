import { Fragment, useState } from 'react';
import { queueKeys } from './queue-keyboard';

const setting = 'gatehouse.queue-keys';

/** Whether the person uses the queue's single-key shortcuts (on unless they turned them off, on this browser). */
export function useQueueKeysSetting(): [boolean, (on: boolean) => void] {
  const [on, setOn] = useState(() => localStorage.getItem(setting) !== 'off');
  return [
    on,
    (value) => {
      localStorage.setItem(setting, value ? 'on' : 'off');
      setOn(value);
    },
  ];
}

const Keys = ({ keys }: { keys: readonly string[] }) => (
  <span className="keys">
    {keys.map((key, index) => (
      <Fragment key={index}>
        {index > 0 && (keys[0] === keys[index] ? ' ' : ' or ')}
        <kbd>{key}</kbd>
      </Fragment>
    ))}
  </span>
);

/**
 * The keys, always in view under the queue (a compact line; `?` or the button opens the full list, where the
 * shortcuts can be turned off), and what the last key did, in words, for everyone and for screen readers.
 */
export function QueueKeyLegend({
  enabled,
  onEnabled,
  helpOpen,
  onHelp,
  message,
}: {
  enabled: boolean;
  onEnabled: (on: boolean) => void;
  helpOpen: boolean;
  onHelp: (open: boolean) => void;
  message: string;
}) {
  return (
    <section className="queue-keys" aria-label="Keyboard shortcuts">
      {helpOpen && (
        <div id="queue-keys-help" className="queue-keys-help">
          <h2>Keyboard shortcuts</h2>
          <p className="hint">Keys act on the review that has the focus; they rest while you type in a field, and Esc takes you from a field back to its review.</p>
          <dl>
            {queueKeys.map((entry) => (
              <div key={entry.short}>
                <dt>
                  <Keys keys={entry.keys} />
                </dt>
                <dd>{entry.what}</dd>
              </div>
            ))}
          </dl>
          <label className="choice">
            <input type="checkbox" checked={enabled} onChange={(event) => onEnabled(event.target.checked)} />
            <span>Use single-key shortcuts</span>
          </label>
        </div>
      )}
      <div className="queue-keys-line">
        {enabled ? (
          <p className="legend">
            {queueKeys.map((entry) => (
              <span key={entry.short}>
                <Keys keys={entry.keys[0] === entry.keys[1] ? entry.keys : entry.keys.slice(0, 1)} /> {entry.short}
              </span>
            ))}
          </p>
        ) : (
          <p className="legend">Single-key shortcuts are off.</p>
        )}
        <button type="button" className="button secondary small" aria-expanded={helpOpen} aria-controls={helpOpen ? 'queue-keys-help' : undefined} onClick={() => onHelp(!helpOpen)}>
          {helpOpen ? 'Hide shortcuts' : 'All shortcuts'}
        </button>
      </div>
      <p role="status" className="queue-keys-said">
        {message}
      </p>
    </section>
  );
}
