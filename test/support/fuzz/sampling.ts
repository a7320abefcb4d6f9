import fc from 'fast-check';

/**
 * At most `perDimension` cases of each dimension (a field, a parameter, a header of one route), picked by
 * fast-check from the seed, and every case without one: each dimension is covered at any size, and a large size
 * sends them all.
 */
export function sampleEach<T extends { dimension?: string }>(cases: readonly T[], perDimension: number, seed: number): T[] {
  const groups = new Map<string, T[]>();
  for (const item of cases) {
    const key = item.dimension ?? `(alone) ${groups.size}`;
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return [...groups.values()].flatMap((group, index) =>
    group.length <= perDimension ? group : fc.sample(fc.shuffledSubarray(group, { minLength: perDimension, maxLength: perDimension }), { seed: seed + index, numRuns: 1 })[0]!,
  );
}
