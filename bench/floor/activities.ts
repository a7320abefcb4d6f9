/** What a gated Allow answers, once the bench has read one back; the fair floor's local activity gives it. */
export interface FloorSample {
  answer: unknown;
}

/** The floor's local activities: they do nothing, so what they cost is the SDK's alone. */
export function floorActivities(sample: { current?: FloorSample }) {
  return {
    async nothing(): Promise<string> {
      return 'done';
    },
    async answerOf(_request: unknown): Promise<unknown> {
      if (!sample.current) throw new Error('the fair floor ran before the bench read a gated Allow back');
      return sample.current.answer;
    },
  };
}

export type FloorActivities = ReturnType<typeof floorActivities>;
