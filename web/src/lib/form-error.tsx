import { ApiError } from './api';

/** A failed request, said in words, where the person is looking; announced to screen readers. */
export function FormError({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError ? error.message : 'Something went wrong. Try again.';
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}
