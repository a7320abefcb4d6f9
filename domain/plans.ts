export type Feature = 'expenses' | 'work_logs';

export interface Plan {
  name: string;
  features: Feature[];
}

const plans: Record<string, Plan> = {
  free: { name: 'free', features: [] },
  pro: { name: 'pro', features: ['expenses'] },
  business: { name: 'business', features: ['expenses', 'work_logs'] },
};

export const planNames = Object.keys(plans);

export function planByName(name: string): Plan {
  return plans[name] ?? plans.free!;
}
