// The console's charts: pictures drawn with visx, each a figure with a sentence that says what it shows and its
// figures as a table, so a screen reader (and anyone who would rather read) gets the same.
export { BarChart, type BarGroup } from './bar-chart';
export { Timeline, type TimelineEvent } from './timeline';
export type { Series, Tone } from './chart-figure';
