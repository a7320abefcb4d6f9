const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function when(iso: string | null | undefined, otherwise = '—'): string {
  return iso ? dateTime.format(new Date(iso)) : otherwise;
}

export function day(iso: string | null | undefined, otherwise = '—'): string {
  return iso ? dateOnly.format(new Date(iso)) : otherwise;
}

export const roleNames = { owner: 'Owner', admin: 'Admin', reviewer: 'Reviewer', member: 'Member' } as const;
