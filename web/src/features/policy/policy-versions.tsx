import { FormError } from '../../lib/form-error';
import { when } from '../../lib/format';
import type { PolicyVersion } from './api';

/** Every saved version, newest first, each opening to its Cedar text; editors may start a draft from an older one. */
export function PolicyVersions(props: {
  versions: PolicyVersion[] | undefined;
  loadError: unknown;
  inForce: number | undefined;
  canEdit: boolean;
  onUseAsDraft: (version: PolicyVersion) => void;
}) {
  const { versions, loadError, inForce, canEdit, onUseAsDraft } = props;
  return (
    <section className="card" aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      <p className="hint">Every saved version, newest first (the 50 newest). Open one to read its text.</p>
      <FormError error={loadError} />
      {versions === undefined ? (
        !loadError && <p role="status">Loading…</p>
      ) : (
        <ul className="plain-list versions">
          {versions.map((version) => (
            <li key={version.version}>
              <details className="cedar-details">
                <summary>
                  <strong>Version {version.version}</strong>{' '}
                  {version.version === inForce && <span className="state on">In force</span>} · by {version.created_by} · {when(version.created_at)}
                </summary>
                <pre className="cedar">{version.source}</pre>
                {canEdit && version.version !== inForce && (
                  <button type="button" className="button secondary small" onClick={() => onUseAsDraft(version)}>
                    Put version {version.version} in the draft
                  </button>
                )}
              </details>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
