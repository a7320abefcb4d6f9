import { api } from '../../lib/api';
import type { Data } from '../../lib/api-types';

export type Overview = Data<'overview_get'>;
export type NeedsAPerson = Overview['needs_a_person'][number];
export type WaitingReview = NonNullable<Overview['queue']['oldest']>;

export const overviewApi = {
  get: (background = false) => api.get<Overview>('/v1/overview', { background }),
};
