import { useState, type FormEvent } from 'react';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { when } from '../../lib/format';
import { agentsApi, type Memory } from './api';

/** One memory, with an admin's correct and forget: each asks why, for the audit trail. */
export function MemoryItem({ memory, label, mayChange, onChanged }: { memory: Memory; label: string; mayChange: boolean; onChanged: () => void }) {
  const [mode, setMode] = useState<'view' | 'correct' | 'forget'>('view');
  const [content, setContent] = useState(memory.content);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<unknown>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    try {
      if (mode === 'correct') await agentsApi.correct(memory.id, { content, reason });
      else await agentsApi.forget(memory.id, { reason });
      setMode('view');
      setReason('');
      onChanged();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <li className="memory" data-memory-id={memory.id}>
      <p className="memory-content">{memory.content}</p>
      <p className="hint">
        {label} · {memory.tags.length ? memory.tags.join(', ') : 'no tags'} · {when(memory.updated_at)}
      </p>
      {mayChange && mode === 'view' && (
        <div className="action-buttons">
          <button type="button" className="button secondary small" aria-label={`Correct memory: ${memory.content.slice(0, 40)}`} onClick={() => setMode('correct')}>
            Correct
          </button>
          <button type="button" className="button secondary small" aria-label={`Forget memory: ${memory.content.slice(0, 40)}`} onClick={() => setMode('forget')}>
            Forget
          </button>
        </div>
      )}
      {mode !== 'view' && (
        <form className="stack" onSubmit={(event) => void submit(event)}>
          {mode === 'correct' && (
            <FormField id={`content-${memory.id}`} label="The note as it should read">
              {(control) => <textarea {...control} rows={3} required maxLength={4000} value={content} onChange={(event) => setContent(event.target.value)} />}
            </FormField>
          )}
          <FormField id={`reason-${memory.id}`} label="Why (kept in the audit trail)">
            {(control) => <input {...control} required maxLength={500} value={reason} onChange={(event) => setReason(event.target.value)} />}
          </FormField>
          <FormError error={error} />
          <div className="action-buttons">
            <button type="submit" className={`button small ${mode === 'forget' ? 'danger' : ''}`}>
              {mode === 'correct' ? 'Save correction' : 'Forget it'}
            </button>
            <button type="button" className="button secondary small" onClick={() => setMode('view')}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </li>
  );
}
