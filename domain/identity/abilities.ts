/**
 * Resource families and the abilities that reach them. An API key carries a subset; `<family>.write`
 * only means something on a read-write key.
 */
export const families = {
  tasks: { read: true, write: true, description: 'Tasks: to-dos with status, priority, due date and tags' },
  projects: { read: true, write: true, description: 'Projects that group tasks' },
  customers: { read: true, write: true, description: 'Customers: people and companies the organization serves' },
  calendar: { read: true, write: true, description: 'The unified calendar feed and generic events' },
  invoices: { read: true, write: false, description: 'Invoices, read-only' },
  products: { read: true, write: false, description: 'Products, read-only' },
  bookings: { read: true, write: false, description: 'Bookings, read-only' },
  expenses: { read: true, write: false, description: 'Expenses, when the plan includes them' },
  work_logs: { read: true, write: false, description: 'Work logs, when the plan includes them' },
  team: { read: true, write: false, description: 'The active team roster' },
  meeting_ingests: { read: true, write: true, description: 'Meeting transcripts and the tasks extracted from them' },
  memories: { read: true, write: true, description: 'Agent memories: short notes a key keeps across conversations, visible only to that key' },
  reviews: { read: true, write: false, description: 'The review queue of held writes (people decide; keys may only read)' },
} as const;

export type Family = keyof typeof families;
export type Ability = `${Family}.read` | `${Family}.write`;
export type Access = 'read' | 'read_write';

export const allAbilities: readonly Ability[] = Object.entries(families).flatMap(([family, posture]) => [
  `${family}.read` as Ability,
  ...(posture.write ? [`${family}.write` as Ability] : []),
]);

export function isAbility(value: string): value is Ability {
  return (allAbilities as readonly string[]).includes(value);
}

export function isWriteAbility(ability: Ability): boolean {
  return ability.endsWith('.write');
}

/** What a key gets when its creator names no abilities: everything its access level can use. */
export function defaultAbilities(access: Access): Ability[] {
  return allAbilities.filter((ability) => access === 'read_write' || !isWriteAbility(ability));
}
