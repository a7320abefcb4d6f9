import { monotonicFactory } from 'ulid';

const nextUlid = monotonicFactory();

export type IdPrefix =
  | 'org' | 'key' | 'usr' | 'pat' | 'dec' | 'rev' | 'evt'
  | 'task' | 'prj' | 'cus' | 'cal' | 'mem' | 'prd' | 'inv' | 'bkg' | 'exp' | 'wlg' | 'mtg' | 'mry' | 'call';

/** Opaque ids that sort by creation time, so they double as a stable pagination order. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${sortableUnique()}`;
}

/** 26 lowercase characters, unique and sorting by creation time. */
export function sortableUnique(): string {
  return nextUlid().toLowerCase();
}
