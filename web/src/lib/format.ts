const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function when(iso: string | null | undefined, otherwise = '—'): string {
  return iso ? dateTime.format(new Date(iso)) : otherwise;
}

export function day(iso: string | null | undefined, otherwise = '—'): string {
  return iso ? dateOnly.format(new Date(iso)) : otherwise;
}

export const roleNames = { owner: 'Owner', admin: 'Admin', reviewer: 'Reviewer', member: 'Member' } as const;

/** What a trust window matches, as people read it: `project_id = "prj_…", status = "todo"`. */
export function trustMatchText(match: Record<string, unknown>): string {
  const terms = Object.entries(match).map(([name, value]) => `${name} = ${JSON.stringify(value)}`);
  return terms.length ? terms.join(', ') : 'any record';
}
