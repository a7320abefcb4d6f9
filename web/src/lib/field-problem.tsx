import { ApiError } from './api';

/**
 * The API's problems with a form's fields, by the top-level field they name (`event_types.0` is `event_types`'s),
 * for the fields the form shows; a failure that names none of them is the form's own.
 */
export function problemsByField(error: unknown, fields: readonly string[]): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const problems: Record<string, string> = {};
  for (const [field, message] of Object.entries(error.fieldProblems())) {
    const top = field.split('.')[0]!;
    if (fields.includes(top)) problems[top] ??= message;
  }
  return problems;
}

/** One field's problem, under it; the field points at it with aria-describedby and says it is invalid. */
export function FieldProblem({ id, problem }: { id: string; problem: string | undefined }) {
  if (!problem) return null;
  return (
    <p id={id} className="error">
      {problem}
    </p>
  );
}
