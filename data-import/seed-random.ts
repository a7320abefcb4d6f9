/** A small seeded generator (mulberry32): the same seed gives the same demo data, with no dependency. */
export interface Random {
  /** A number in [0, 1). */
  next(): number;
  /** An integer from min to max, both included. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Picks by weight: `[["todo", 5], ["done", 1]]` gives todo five times as often. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T;
  /** Up to `count` different items, in random order. */
  sample<T>(items: readonly T[], count: number): T[];
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const random: Random = {
    next,
    int,
    chance: (probability) => next() < probability,
    pick: (items) => {
      if (!items.length) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)]!;
    },
    weighted: (entries) => {
      const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
      let roll = next() * total;
      for (const [value, weight] of entries) {
        roll -= weight;
        if (roll < 0) return value;
      }
      return entries.at(-1)![0];
    },
    sample: (items, count) => {
      const pool = [...items];
      const out: (typeof items)[number][] = [];
      while (out.length < count && pool.length) out.push(pool.splice(int(0, pool.length - 1), 1)[0]!);
      return out;
    },
  };
  return random;
}
