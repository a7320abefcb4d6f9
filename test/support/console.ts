import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Database } from '../../db/database';
import type { Role } from '../../domain/identity/actors';
import type { Organization } from '../../domain/identity/organizations';
import { setPasswordWithLink } from '../../domain/identity/password-links';
import { cliManager, invitePerson, type User } from '../../domain/identity/people';

let sequence = 0;

export interface TestPerson {
  user: User;
  email: string;
  password: string;
}

/** A person of the organization with a password set through their one-time link, as a person would. */
export async function addPerson(db: Database, organization: Organization, role: Role, email?: string): Promise<TestPerson> {
  const address = email ?? `${role}-${Date.now().toString(36)}-${sequence++}@${organization.slug}.test`;
  const password = `correct horse battery ${sequence++}`;
  const { user, link } = await invitePerson(db, { orgId: organization.id, email: address, role }, cliManager);
  await setPasswordWithLink(db, link.token, password);
  return { user: { ...user, hasPassword: true }, email: address, password };
}

export interface ConsoleSession {
  cookie: string;
  csrfToken: string;
  /** A console request as the console's page makes it: the session cookie, and the CSRF token on writes. */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
}

export function cookieOf(response: LightMyRequestResponse): string {
  const cookie = response.cookies.find((candidate) => candidate.name.endsWith('gatehouse_session'));
  if (!cookie) throw new Error(`no session cookie in the answer (${response.statusCode} ${response.body})`);
  return `${cookie.name}=${cookie.value}`;
}

let addressSequence = 0;

/**
 * An address of its own for each sign-in (198.18.0.0/15, kept for tests): the limit on sign-ins per address is not
 * what the tests that sign people in are about.
 */
export function freshAddress(): string {
  const n = addressSequence++;
  return `198.18.${Math.floor(n / 250) % 256}.${(n % 250) + 1}`;
}

export async function signIn(app: FastifyInstance, organization: { slug: string }, person: { email: string; password: string }): Promise<ConsoleSession> {
  const response = await app.inject({
    method: 'POST',
    url: '/console/api/session',
    payload: { organization: organization.slug, email: person.email, password: person.password },
    remoteAddress: freshAddress(),
  });
  if (response.statusCode !== 201) throw new Error(`sign-in failed: ${response.statusCode} ${response.body}`);
  const cookie = cookieOf(response);
  const csrfToken = (response.json() as { data: { csrf_token: string } }).data.csrf_token;
  return {
    cookie,
    csrfToken,
    request: ({ headers, ...rest }) => app.inject({ ...rest, headers: { cookie, 'x-csrf-token': csrfToken, ...headers } }),
  };
}
