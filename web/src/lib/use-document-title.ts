import { useEffect } from 'react';

/** Each page names itself, so a screen reader and the browser's history say where the person is. */
export function useDocumentTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Gatehouse`;
  }, [title]);
}
