import { BarChart, type Series } from '../../lib/charts';
import type { ChangeCounts } from './api';

/** What a draft would decide, as the bars' colours say it. */
const wouldBe: Series[] = [
  { key: 'allow', name: 'Would be allowed', tone: 'ok' },
  { key: 'review', name: 'Would be held for review', tone: 'waiting' },
  { key: 'deny', name: 'Would be denied', tone: 'off' },
];

/** "allow → review" as people read it: "Allowed → held". */
const decisionWords: Record<string, string> = { allow: 'Allowed', review: 'Held', deny: 'Denied' };

/**
 * How many decisions a draft changes, a bar for each change (allowed → held…), most first, coloured by what the draft
 * would decide; its figures as a table for screen readers.
 */
export function ChangeChart({ counts, title }: { counts: ChangeCounts; title: string }) {
  const entries = Object.entries(counts).sort(([a, one], [b, other]) => other - one || (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return null;
  const groups = entries.map(([change, count]) => {
    const [was = change, would = ''] = change.split('→');
    return { key: change, label: `${decisionWords[was] ?? was} → ${(decisionWords[would] ?? would).toLowerCase()}`, values: { [would]: count } };
  });
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  const summary = `${total} ${total === 1 ? 'decision' : 'decisions'} would change: ${groups.map((group, index) => `${entries[index]![1]} ${group.label.toLowerCase()}`).join(', ')}.`;
  return (
    <BarChart
      title={title}
      summary={summary}
      series={wouldBe.filter(({ key }) => groups.some((group) => key in group.values))}
      groups={groups}
      horizontal
      groupHeading="Was → would be"
    />
  );
}
