import type { z } from 'zod';
import type { Database } from '../db/database';
import { importData, type ImportCounts } from './import';
import type {
  DataFile,
  bookingRecord,
  customerRecord,
  eventRecord,
  expenseRecord,
  invoiceLineRecord,
  invoiceRecord,
  productRecord,
  projectRecord,
  taskRecord,
  teamMemberRecord,
  workLogRecord,
} from './import-schema';
import { invoiceTotal } from './import-schema';
import { seededRandom, type Random } from './seed-random';
import * as words from './seed-vocabulary';

// `gatehouse seed`: realistic demo data, the same for the same seed (and day), written through the import.

export const seedSizes = {
  small: { team_members: 8, projects: 6, products: 15, tasks: 300, customers: 60, events: 40, invoices: 80, bookings: 60, expenses: 100, work_logs: 200 },
  large: {
    team_members: 60,
    projects: 150,
    products: 80,
    tasks: 50_000,
    customers: 10_000,
    events: 3_000,
    invoices: 15_000,
    bookings: 10_000,
    expenses: 8_000,
    work_logs: 40_000,
  },
} as const;
export type SeedSize = keyof typeof seedSizes;
export const seedSizeNames = Object.keys(seedSizes) as SeedSize[];

export interface SeedOptions {
  size: SeedSize;
  seed: number;
  /** Dates spread around this day (default: today). */
  today?: Date;
  /** Team members' email domain, e.g. demo.example. */
  domain?: string;
  /** The first invoice number, so that seeding twice never reuses one. */
  firstInvoiceNumber?: number;
  currency?: string;
}

type In<T extends z.ZodType> = z.input<T>;
type InvoiceLine = In<typeof invoiceLineRecord>;
const currencyDefault = 'USD';

/** Fills an organization with demo data through the import path: validated, one transaction. */
export async function seedOrganization(
  db: Database,
  organization: { id: string; slug: string },
  options: { size: SeedSize; seed?: number; today?: Date },
): Promise<ImportCounts> {
  const { rows } = await db.query(
    `SELECT COALESCE(MAX(substring(number FROM '^INV-([0-9]{1,9})$')::int), 0) AS last FROM invoices WHERE org_id = $1`,
    [organization.id],
  );
  const data = generateDemoData({
    size: options.size,
    seed: options.seed ?? 1,
    today: options.today,
    domain: `${organization.slug}.example`,
    firstInvoiceNumber: (rows[0].last as number) + 1,
  });
  return importData(db, organization.id, data);
}

export function generateDemoData(options: SeedOptions): DataFile {
  const random = seededRandom(options.seed);
  const counts = seedSizes[options.size];
  const calendar = days(options.today ?? new Date(), random);
  const currency = options.currency ?? currencyDefault;
  const fill = (template: string, values: Record<string, () => string>) =>
    template.replace(/\{(\w+)\}/g, (_, name: string) => values[name]?.() ?? name);

  const team_members = teamMembers(random, counts.team_members, options.domain ?? 'team.example');
  const active = team_members.filter((member) => member.active !== false);
  const memberName = new Map(team_members.map((member) => [member.ref, member.name]));

  const projects: In<typeof projectRecord>[] = Array.from({ length: counts.projects }, (_, index) => {
    const round = Math.floor(index / words.projectNames.length);
    const start = calendar.spread(90) - 30;
    const due = start + random.int(30, 180);
    return {
      ref: `prj-${index + 1}`,
      name: `${words.projectNames[index % words.projectNames.length]}${round ? ` ${round + 1}` : ''}`,
      description: random.chance(0.6) ? random.pick(words.projectDescriptions) : undefined,
      status:
        start > 0
          ? random.weighted([['planned', 8], ['on_hold', 1]])
          : due < 0
            ? random.weighted([['completed', 6], ['active', 2], ['cancelled', 1]])
            : random.weighted([['active', 10], ['on_hold', 2], ['completed', 1]]),
      owner_ref: random.chance(0.9) ? random.pick(active).ref : undefined,
      start_on: calendar.day(start),
      due_on: calendar.day(due),
      tags: random.sample(words.projectTags, random.int(0, 2)),
    };
  });

  const products = productCatalog(random, counts.products, currency);
  const bookable = products.filter((product) => product.minutes !== undefined);

  const customers = customerList(random, counts.customers);
  const companyOf = (customer: (typeof customers)[number]) => customer.company ?? customer.name;

  const tasks: In<typeof taskRecord>[] = Array.from({ length: counts.tasks }, (_, index) => {
    const dueIn = random.chance(0.8) ? calendar.spread(60) : undefined;
    const customer = random.pick(customers);
    const project = random.chance(0.7) ? random.pick(projects) : undefined;
    const past = dueIn !== undefined && dueIn < 0;
    return {
      ref: `task-${index + 1}`,
      title: fill(random.pick(words.taskTitles), {
        company: () => companyOf(customer),
        person: () => customer.name,
        project: () => project?.name ?? random.pick(projects).name,
        product: () => random.pick(products).record.name,
      }),
      description: random.chance(0.4) ? random.pick(words.taskDescriptions) : undefined,
      status: past
        ? random.weighted([['done', 12], ['in_progress', 3], ['todo', 2], ['blocked', 1], ['cancelled', 2]])
        : random.weighted([['todo', 11], ['in_progress', 5], ['blocked', 2], ['done', 2], ['cancelled', 0.5]]),
      priority: random.weighted([['low', 4], ['normal', 10], ['high', 4], ['urgent', 1.5]]),
      due_on: dueIn === undefined ? undefined : calendar.day(dueIn),
      tags: random.sample(words.taskTags, random.weighted([[0, 3], [1, 4], [2, 2]])),
      project_ref: project?.ref,
      assignee_ref: random.chance(0.85) ? random.pick(active).ref : undefined,
    };
  });

  const eventWindow = options.size === 'small' ? { from: 0, to: 28 } : { from: -60, to: 90 };
  const events: In<typeof eventRecord>[] = Array.from({ length: counts.events }, () => {
    const day = calendar.workday(random.int(eventWindow.from, eventWindow.to));
    const startMinute = random.int(16, 34) * 30;
    const title = random.pick(words.eventTitles);
    const attendees = random.sample(active, title.startsWith('1:1') ? 2 : random.int(1, 4));
    const customer = random.chance(0.4) ? random.pick(customers) : undefined;
    return {
      title: fill(title, {
        company: () => (customer ? companyOf(customer) : companyOf(random.pick(customers))),
        project: () => random.pick(projects).name,
        member: () => memberName.get(attendees.at(-1)!.ref)!,
        role: () => random.pick(words.jobTitles),
      }),
      description: random.chance(0.3) ? 'Agenda in the shared folder.' : undefined,
      location: random.pick(words.eventLocations),
      starts_at: calendar.instant(day, startMinute),
      ends_at: calendar.instant(day, startMinute + random.pick([30, 45, 60, 60, 90])),
      attendee_refs: attendees.map((member) => member.ref),
      customer_ref: customer?.ref,
    };
  });

  const invoices = invoiceList(random, counts.invoices, { customers, products, calendar, currency, first: options.firstInvoiceNumber ?? 1 });

  const bookings: In<typeof bookingRecord>[] = Array.from({ length: counts.bookings }, () => {
    const product = random.pick(bookable);
    const offset = calendar.spread(30);
    const day = calendar.workday(offset);
    const startMinute = random.int(16, 33) * 30;
    return {
      customer_ref: random.pick(customers).ref,
      product_ref: product.record.ref,
      staff_member_ref: random.chance(0.9) ? random.pick(active).ref : undefined,
      title: product.record.name,
      status:
        offset < 0
          ? random.weighted([['completed', 16], ['no_show', 1.5], ['cancelled', 2.5]])
          : random.weighted([['confirmed', 9], ['cancelled', 1]]),
      starts_at: calendar.instant(day, startMinute),
      ends_at: calendar.instant(day, startMinute + product.minutes!),
      notes: random.chance(0.2) ? random.pick(words.bookingNotes) : undefined,
    };
  });

  const expenses: In<typeof expenseRecord>[] = Array.from({ length: counts.expenses }, () => {
    const idea = random.pick(words.expenseIdeas);
    return {
      member_ref: random.chance(0.9) ? random.pick(team_members).ref : undefined,
      project_ref: random.chance(0.5) ? random.pick(projects).ref : undefined,
      description: random.pick(idea.descriptions),
      category: idea.category,
      amount_cents: random.int(idea.minCents / 100, idea.maxCents / 100) * 100 + random.pick([0, 0, 50, 90, 99]),
      currency,
      spent_on: calendar.day(calendar.workday(-random.int(0, 120))),
    };
  });

  const work_logs: In<typeof workLogRecord>[] = Array.from({ length: counts.work_logs }, () => {
    const task = random.chance(0.75) ? random.pick(tasks) : undefined;
    return {
      member_ref: task?.assignee_ref ?? random.pick(active).ref,
      task_ref: task?.ref,
      project_ref: task ? task.project_ref : random.pick(projects).ref,
      minutes: random.int(1, 16) * 15,
      worked_on: calendar.day(calendar.workday(-random.int(0, 60))),
      note: random.chance(0.5) ? random.pick(words.workNotes) : undefined,
    };
  });

  return {
    team_members,
    projects,
    products: products.map((product) => product.record),
    tasks,
    customers,
    events,
    invoices,
    bookings,
    expenses,
    work_logs,
  };
}

/** Days relative to today (UTC), as the data file writes them. */
function days(today: Date, random: Random) {
  const midnight = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const dateOf = (offset: number) => new Date(midnight + offset * 86_400_000);
  return {
    day: (offset: number) => dateOf(offset).toISOString().slice(0, 10),
    instant: (offset: number, minuteOfDay: number) => new Date(midnight + offset * 86_400_000 + minuteOfDay * 60_000).toISOString().replace('.000Z', 'Z'),
    /** The offset moved off a weekend, to the Friday before or the Monday after. */
    workday(offset: number) {
      const weekday = dateOf(offset).getUTCDay();
      return weekday === 6 ? offset - 1 : weekday === 0 ? offset + 1 : offset;
    },
    /** An offset from -range to range, more often near today. */
    spread: (range: number) => Math.round((random.next() + random.next() - 1) * range),
  };
}

function teamMembers(random: Random, count: number, domain: string): In<typeof teamMemberRecord>[] {
  const used = new Set<string>();
  return Array.from({ length: count }, (_, index) => {
    let name: string;
    do name = `${random.pick(words.firstNames)} ${random.pick(words.lastNames)}`;
    while (used.has(name));
    used.add(name);
    return {
      ref: `mem-${index + 1}`,
      name,
      email: `${emailLocal(name)}@${domain}`,
      title: index === 0 ? 'Managing director' : random.pick(words.jobTitles.slice(1)),
      active: index === 0 || !random.chance(count > 10 ? 0.1 : 0.12),
    };
  });
}

function productCatalog(random: Random, count: number, currency: string) {
  return Array.from({ length: count }, (_, index) => {
    const idea = words.productIdeas[index % words.productIdeas.length]!;
    const round = Math.floor(index / words.productIdeas.length);
    const tier = round ? words.productTiers[(round - 1) % words.productTiers.length] : undefined;
    const record: In<typeof productRecord> = {
      ref: `prd-${index + 1}`,
      name: tier ? `${idea.name} – ${tier}` : idea.name,
      sku: `${idea.code}-${String(100 + index).padStart(4, '0')}`,
      description: idea.description,
      unit_price_cents: Math.round((idea.priceCents * (1 + round * 0.35)) / 100) * 100,
      currency,
      active: !random.chance(0.12),
    };
    return { record, minutes: idea.bookableMinutes };
  });
}

function customerList(random: Random, count: number) {
  const emails = new Map<string, number>();
  const unique = (local: string, domain: string) => {
    const seen = emails.get(`${local}@${domain}`) ?? 0;
    emails.set(`${local}@${domain}`, seen + 1);
    return `${local}${seen ? seen + 1 : ''}@${domain}`;
  };
  return Array.from({ length: count }, (_, index): In<typeof customerRecord> => {
    const name = `${random.pick(words.firstNames)} ${random.pick(words.lastNames)}`;
    const company = random.chance(0.7)
      ? `${random.pick(words.companyStems)} ${random.pick(words.companyKinds)}${random.pick(words.companySuffixes)}`
      : undefined;
    const domain = company ? `${emailLocal(company.replace(/ (Ltd|Inc\.|GmbH|& Co\.|LLC|Group)$/, '')).replaceAll('.', '-')}.example` : random.pick(words.personalMailDomains);
    return {
      ref: `cus-${index + 1}`,
      name,
      company,
      email: random.chance(0.92) ? unique(emailLocal(name), domain) : undefined,
      phone: random.chance(0.75) ? `+1 (${random.int(201, 989)}) 555-01${String(random.int(0, 99)).padStart(2, '0')}` : undefined,
      tags: random.sample(words.customerTags, random.weighted([[0, 4], [1, 5], [2, 3], [3, 1]])),
      notes: random.chance(0.3) ? random.pick(words.customerNotes) : undefined,
    };
  });
}

function invoiceList(
  random: Random,
  count: number,
  context: {
    customers: { ref: string }[];
    products: { record: In<typeof productRecord> }[];
    calendar: ReturnType<typeof days>;
    currency: string;
    first: number;
  },
): In<typeof invoiceRecord>[] {
  const { calendar } = context;
  const drafts = Array.from({ length: count }, () => {
    const issuedIn = -random.int(0, 180);
    const dueIn = issuedIn + random.pick([14, 14, 30, 30, 30, 45]);
    const lines: InvoiceLine[] = random.sample(context.products, random.weighted([[1, 5], [2, 4], [3, 2], [4, 1]])).map(({ record }) => ({
      description: record.name,
      quantity: record.name.endsWith('hour') ? random.int(2, 16) / 2 : random.int(1, 5),
      unit_price_cents: record.unit_price_cents,
      product_ref: record.ref,
    }));
    if (random.chance(0.1)) {
      lines.push({ description: 'Discount (loyal customer)', quantity: 1, unit_price_cents: -Math.round(invoiceTotal(lines) * 0.1) });
    }
    const status =
      dueIn < 0
        ? random.weighted([['paid', 15], ['overdue', 4], ['void', 1]] as const)
        : issuedIn > -5
          ? random.weighted([['draft', 3], ['sent', 7]] as const)
          : random.weighted([['sent', 8], ['paid', 2]] as const);
    return { issuedIn, dueIn, lines, status };
  });
  drafts.sort((a, b) => a.issuedIn - b.issuedIn);
  return drafts.map((draft, index) => ({
    number: `INV-${String(context.first + index).padStart(5, '0')}`,
    customer_ref: random.pick(context.customers).ref,
    status: draft.status,
    issued_on: calendar.day(draft.issuedIn),
    due_on: calendar.day(draft.dueIn),
    currency: context.currency,
    lines: draft.lines,
    total_cents: invoiceTotal(draft.lines),
  }));
}

function emailLocal(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '.')
    .replace(/^\.|\.$/g, '');
}
