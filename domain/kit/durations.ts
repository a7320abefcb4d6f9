// Waits and windows as people write them: 45s, 30m, 2h, 7d.

const units = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const waitPattern = /^\s*(\d{1,7})\s*([smhd])\s*$/;

/** A wait as people write it (30m, 2h, 45s, 7d) in milliseconds, or undefined when it is not one. */
export function parseWait(text: string): number | undefined {
  const match = waitPattern.exec(text);
  return match ? Number(match[1]) * units[match[2] as keyof typeof units] : undefined;
}

/** The wait as people write it: 30m, 2h, 45s. */
export function shownWait(ms: number): string {
  const unit = (['d', 'h', 'm'] as const).find((candidate) => ms % units[candidate] === 0) ?? 's';
  return `${Math.round(ms / units[unit])}${unit}`;
}
