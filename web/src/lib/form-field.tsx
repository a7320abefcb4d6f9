import type { ReactNode } from 'react';
import { FieldProblem } from './field-problem';

/** What a field's control is given: its id, and what it must say about its problem and hint. */
export interface ControlProps {
  id: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
}

/**
 * One field of a form: its label, its control, the problem the API or the form found with it (under it) and a
 * hint. The control points at both with aria-describedby and says when it is invalid.
 */
export function FormField(props: {
  id: string;
  label: ReactNode;
  /** For a field whose row says what it is (a role in a person's row): screen readers read the label. */
  labelHidden?: boolean;
  problem?: string;
  hint?: ReactNode;
  /** Layout beside `field`: `nested`, `wide`, `span`. */
  className?: string;
  children: (control: ControlProps) => ReactNode;
}) {
  const { id, label, labelHidden, problem, hint, className, children } = props;
  const problemId = `${id}-problem`;
  const hintId = `${id}-hint`;
  const describedBy = [problem !== undefined && problemId, hint !== undefined && hintId].filter(Boolean).join(' ');
  return (
    <div className={className ? `field ${className}` : 'field'}>
      <label htmlFor={id} className={labelHidden ? 'visually-hidden' : undefined}>
        {label}
      </label>
      {children({ id, 'aria-invalid': problem ? true : undefined, 'aria-describedby': describedBy || undefined })}
      <FieldProblem id={problemId} problem={problem} />
      {hint !== undefined && (
        <span id={hintId} className="hint">
          {hint}
        </span>
      )}
    </div>
  );
}
