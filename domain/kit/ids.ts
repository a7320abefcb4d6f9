import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * The randomness of ids: ulid asks for one random byte per character, which its default source fetches from the
 * operating system one byte at a time (a tenth of a millisecond an id); these come from a pool refilled 4 KiB at
 * a time, from the same source.
 */
const pool = Buffer.alloc(4096);
let taken = pool.length;
function pooledRandom(): number {
  if (taken === pool.length) {
    randomFillSync(pool);
    taken = 0;
  }
  return pool[taken++]! / 256;
}

const nextUlid = monotonicFactory(pooledRandom);

export type IdPrefix =
  | 'org' | 'key' | 'usr' | 'pat' | 'ses' | 'pwl' | 'dec' | 'rev' | 'evt'
  | 'task' | 'prj' | 'cus' | 'cal' | 'mem' | 'prd' | 'inv' | 'bkg' | 'exp' | 'wlg' | 'mtg' | 'mry' | 'call' | 'whk' | 'whd' | 'edt' | 'pky' | 'trw' | 'undo' | 'chs';

/** Opaque ids that sort by creation time, so they double as a stable pagination order. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${sortableUnique()}`;
}

/** 26 lowercase characters, unique and sorting by creation time. */
export function sortableUnique(): string {
  return nextUlid().toLowerCase();
}
