// Words the demo data is made of. Emails use the reserved .example domain and phone numbers the 555-01xx
// range, so demo data can never reach a real person.

export const firstNames = [
  'Ada', 'Aisha', 'Alejandro', 'Amara', 'Amir', 'Anna', 'Arjun', 'Ben', 'Camila', 'Carlos', 'Chen', 'Chloe', 'Daniel',
  'Dmitri', 'Elena', 'Elif', 'Emma', 'Ethan', 'Fatima', 'Felix', 'Freya', 'Gabriel', 'Grace', 'Hana', 'Hannah',
  'Hugo', 'Ibrahim', 'Ines', 'Isaac', 'Ivy', 'Jamal', 'James', 'Jana', 'Javier', 'Jin', 'Jonas', 'Julia', 'Kai',
  'Kenji', 'Lara', 'Leila', 'Leo', 'Liam', 'Lina', 'Lucas', 'Luis', 'Maya', 'Mateo', 'Mei', 'Mia', 'Mohammed',
  'Nadia', 'Naomi', 'Nia', 'Nikolai', 'Noah', 'Nora', 'Olga', 'Omar', 'Oscar', 'Priya', 'Rafael', 'Ravi', 'Rosa',
  'Ruth', 'Sakura', 'Samuel', 'Sara', 'Sofia', 'Soren', 'Tariq', 'Theo', 'Tomas', 'Valentina', 'Victor', 'Wei',
  'Yara', 'Yusuf', 'Zainab', 'Zoe',
] as const;

export const lastNames = [
  'Abara', 'Andersen', 'Bauer', 'Becker', 'Bianchi', 'Brooks', 'Castillo', 'Chen', 'Costa', 'Dubois', 'Dvorak',
  'Eriksen', 'Fischer', 'Fontaine', 'Garcia', 'Gupta', 'Haddad', 'Hansen', 'Hoffmann', 'Ito', 'Ivanova', 'Jensen',
  'Kaur', 'Keller', 'Khan', 'Kim', 'Kowalski', 'Larsen', 'Lee', 'Lindqvist', 'Lopez', 'Mancini', 'Martin',
  'Mendes', 'Meyer', 'Moreau', 'Murphy', 'Nakamura', 'Nguyen', 'Novak', 'Okafor', 'Oliveira', "O'Brien", 'Park',
  'Patel', 'Petrov', 'Quinn', 'Rahman', 'Reyes', 'Rossi', 'Sato', 'Schmidt', 'Schulz', 'Silva', 'Singh', 'Sokolov',
  'Svensson', 'Tanaka', 'Thompson', 'Torres', 'Van Dijk', 'Vogel', 'Wagner', 'Walsh', 'Weber', 'Wong', 'Yamamoto',
  'Yilmaz', 'Zhang', 'Zimmermann',
] as const;

export const companyStems = [
  'Northwind', 'Bluepeak', 'Harbor', 'Cedar', 'Ironbridge', 'Silverline', 'Brightlane', 'Oakridge', 'Redwood',
  'Summit', 'Lakeside', 'Meridian', 'Granite', 'Copperleaf', 'Evergreen', 'Foxglove', 'Juniper', 'Keystone',
  'Lighthouse', 'Maplewood', 'Nimbus', 'Orchard', 'Pinecrest', 'Quarry', 'Riverstone', 'Saffron', 'Tidewater',
  'Umbra', 'Vantage', 'Willow', 'Yellowfin', 'Zephyr', 'Atlas', 'Beacon', 'Compass', 'Driftwood', 'Ember',
  'Falcon', 'Golden Gate', 'Highland',
] as const;

export const companyKinds = [
  'Logistics', 'Dental', 'Studio', 'Bakery', 'Consulting', 'Architects', 'Fitness', 'Legal', 'Motors', 'Foods',
  'Labs', 'Analytics', 'Interiors', 'Veterinary Clinic', 'Coffee Roasters', 'Print Shop', 'Events', 'Realty',
  'Health', 'Outfitters', 'Software', 'Florist', 'Brewery', 'Accounting', 'Hotel', 'Pharmacy', 'Academy',
] as const;

export const companySuffixes = ['', '', '', ' Ltd', ' Inc.', ' GmbH', ' & Co.', ' LLC', ' Group'] as const;

export const personalMailDomains = ['mail.example', 'inbox.example', 'post.example', 'fastmail.example'] as const;

export const customerTags = [
  'vip', 'lead', 'wholesale', 'retail', 'newsletter', 'partner', 'churn-risk', 'enterprise', 'smb', 'referral',
  'trial', 'renewal-due',
] as const;

export const customerNotes = [
  'Prefers email over phone calls.',
  'Renewal comes up in the spring; start the conversation early.',
  'Met at the trade fair; interested in the premium plan.',
  'Pays reliably, always within the week.',
  'Asked for a quote for the whole team.',
  'Decision maker is the managing director; loop them in on pricing.',
  'Had a billing issue last quarter; resolved with a credit note.',
  'Wants quarterly business reviews.',
  'Referred by an existing customer.',
  'Only available in the mornings.',
] as const;

export const jobTitles = [
  'Managing director', 'Operations lead', 'Account manager', 'Sales representative', 'Customer success manager',
  'Project manager', 'Designer', 'Software engineer', 'Bookkeeper', 'Marketing specialist', 'Support specialist',
  'Consultant', 'Office manager', 'Technician',
] as const;

export const projectNames = [
  'Website relaunch', 'Customer portal', 'Spring marketing campaign', 'Office move', 'CRM migration',
  'Onboarding revamp', 'Annual audit', 'Mobile app v2', 'Partner program', 'Trade fair', 'Pricing update',
  'Support knowledge base', 'Hiring round', 'Warehouse optimisation', 'Newsletter relaunch', 'Security review',
  'Product photography', 'Loyalty program', 'Data cleanup', 'Franchise expansion',
] as const;

export const projectDescriptions = [
  'Cross-team effort; weekly check-in on Mondays.',
  'Scope agreed with the leadership team; budget approved.',
  'Pilot first with a handful of customers, then roll out.',
  'Depends on the new supplier contract.',
  'Goal: fewer support tickets and faster answers.',
] as const;

export const projectTags = ['internal', 'client', 'marketing', 'ops', 'finance', 'it', 'q1', 'q2', 'q3', 'q4'] as const;

/** `{company}`, `{person}`, `{project}` and `{product}` are filled in from the rest of the data. */
export const taskTitles = [
  'Follow up with {person} at {company}',
  'Send proposal to {company}',
  'Call {person} about the renewal',
  'Prepare quote for {company}',
  'Review contract draft for {company}',
  'Chase overdue invoice from {company}',
  'Schedule demo of {product} for {person}',
  'Update price list for {product}',
  'Write case study with {company}',
  'Plan kickoff for {project}',
  'Draft timeline for {project}',
  'Collect feedback on {project}',
  'Fix broken link on the pricing page',
  'Order new office supplies',
  'Prepare monthly report',
  'Reconcile bank statements',
  'Onboard new team member',
  'Book venue for the team offsite',
  'Renew software licences',
  'Answer support backlog',
  'Update the FAQ',
  'Review expense reports',
  'Draft newsletter',
  'Plan social media posts for next week',
  'Back up shared drive',
  'Check stock levels of {product}',
  'Send thank-you note to {person}',
  'Clean up duplicate customer records',
  'Prepare agenda for the board meeting',
  'Translate onboarding guide',
] as const;

export const taskDescriptions = [
  'Agreed in the last team meeting. Keep it short and send a summary afterwards.',
  'See the shared folder for the previous version.',
  'Needs sign-off from the managing director before it goes out.',
  'Blocked until the supplier confirms the delivery date.',
  'Customer asked for this by phone; mention the discount we discussed.',
  'Low effort, but it keeps slipping. Do it this week.',
  'Check with finance first.',
] as const;

export const taskTags = ['sales', 'support', 'finance', 'marketing', 'ops', 'follow-up', 'admin', 'hiring', 'legal', 'bug'] as const;

export interface ProductIdea {
  name: string;
  code: string;
  priceCents: number;
  /** Minutes, for services that can be booked. */
  bookableMinutes?: number;
  description: string;
}

export const productIdeas: ProductIdea[] = [
  { name: 'Consultation', code: 'CON', priceCents: 12_000, bookableMinutes: 60, description: 'One-hour consultation, on site or remote' },
  { name: 'Express consultation', code: 'CNX', priceCents: 6_500, bookableMinutes: 30, description: 'Thirty minutes for a quick question' },
  { name: 'Onboarding workshop', code: 'WKS', priceCents: 95_000, bookableMinutes: 180, description: 'Half-day workshop for a new team' },
  { name: 'Strategy session', code: 'STR', priceCents: 45_000, bookableMinutes: 120, description: 'Two hours with a senior consultant' },
  { name: 'Training seat', code: 'TRN', priceCents: 29_000, bookableMinutes: 90, description: 'One seat in a scheduled training' },
  { name: 'Maintenance visit', code: 'MNT', priceCents: 18_500, bookableMinutes: 90, description: 'Technician visit, travel included' },
  { name: 'Support plan (monthly)', code: 'SUP', priceCents: 4_900, description: 'Email support, answers within one business day' },
  { name: 'Premium support plan (monthly)', code: 'SPP', priceCents: 14_900, description: 'Phone support and a named contact' },
  { name: 'Software licence (annual)', code: 'LIC', priceCents: 59_900, description: 'One user, all updates included' },
  { name: 'Design hour', code: 'DSH', priceCents: 9_500, description: 'Billed per hour' },
  { name: 'Development hour', code: 'DEV', priceCents: 11_000, description: 'Billed per hour' },
  { name: 'Starter kit', code: 'KIT', priceCents: 24_900, description: 'Hardware bundle for a new workplace' },
  { name: 'Replacement part', code: 'PRT', priceCents: 3_900, description: 'Standard spare part' },
  { name: 'Gift card', code: 'GFT', priceCents: 5_000, description: 'Redeemable for any service' },
  { name: 'Setup fee', code: 'SET', priceCents: 15_000, description: 'One-time setup' },
  { name: 'Data migration', code: 'MIG', priceCents: 75_000, description: 'Import from the previous system' },
];

export const productTiers = ['Basic', 'Plus', 'Pro', 'Enterprise', 'Team', 'Lite'] as const;

/** `{company}`, `{project}` and `{member}` are filled in from the rest of the data. */
export const eventTitles = [
  'Weekly team sync',
  'Quarterly review with {company}',
  'Demo for {company}',
  'Kickoff: {project}',
  'Planning: {project}',
  '1:1 with {member}',
  'Interview: {role} candidate',
  'Sales pipeline review',
  'Lunch with {company}',
  'Budget review',
  'Retrospective: {project}',
  'Supplier call',
] as const;

export const eventLocations = ['Room Atlas', 'Room Borealis', 'Kitchen table', 'Video call', 'Client office', 'Café downstairs'] as const;

export interface ExpenseIdea {
  category: string;
  descriptions: readonly string[];
  minCents: number;
  maxCents: number;
}

export const expenseIdeas: ExpenseIdea[] = [
  { category: 'travel', descriptions: ['Train to client site', 'Taxi to the airport', 'Flight to the trade fair', 'Hotel, two nights', 'Parking'], minCents: 1_500, maxCents: 48_000 },
  { category: 'meals', descriptions: ['Team lunch', 'Client dinner', 'Coffee with a prospect', 'Catering for the workshop'], minCents: 1_200, maxCents: 32_000 },
  { category: 'software', descriptions: ['Design tool subscription', 'Cloud hosting', 'Accounting software', 'Video call licence'], minCents: 900, maxCents: 25_000 },
  { category: 'equipment', descriptions: ['Laptop', 'Monitor', 'Headset', 'Office chair', 'Keyboard and mouse'], minCents: 2_500, maxCents: 180_000 },
  { category: 'office', descriptions: ['Printer paper and toner', 'Cleaning supplies', 'Plants for the office', 'Postage'], minCents: 500, maxCents: 12_000 },
  { category: 'marketing', descriptions: ['Social media ads', 'Printed flyers', 'Trade fair booth', 'Sponsored newsletter'], minCents: 5_000, maxCents: 250_000 },
  { category: 'training', descriptions: ['Online course', 'Conference ticket', 'Books'], minCents: 2_000, maxCents: 90_000 },
];

export const workNotes = [
  'Drafted the first version',
  'Call with the client',
  'Reviewed feedback and made changes',
  'Research and preparation',
  'Fixed issues found in testing',
  'Meeting notes and follow-up',
  'Wrapped up and handed over',
] as const;

export const bookingNotes = [
  'First visit.',
  'Asked for a reminder the day before.',
  'Bring the updated paperwork.',
  'Rescheduled once already.',
  'Parking at the back entrance.',
] as const;
