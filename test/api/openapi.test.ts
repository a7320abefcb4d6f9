import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { catalog as wholeCatalog } from '../../api/catalog';
import { isOfferedOn, pathParameters, type Operation } from '../../api/catalog/operation';
import { buildOpenApiDocument, type OpenApiDocument, type OpenApiOperation } from '../../api/rest/openapi';
import { errorStatus } from '../../domain/kit/errors';
import { addPerson, signIn } from '../support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';

/** What REST offers (the console's own operations are tested in console-api.test.ts). */
const catalog = wholeCatalog.filter((operation) => isOfferedOn(operation, 'rest'));

const shapes = [
  { explicit: false, label: '/v1/…' },
  { explicit: true, label: '/v1/organizations/{slug}/…' },
] as const;

const documentPath = (operation: Operation, explicit: boolean) =>
  `/v1${explicit ? '/organizations/{slug}' : ''}${operation.path.replace(/:([a-z_]+)/g, '{$1}')}`;

const cases = catalog.flatMap((operation) => shapes.map((shape) => [`${operation.name} on ${shape.label}`, operation, shape.explicit] as const));

const unrepresentable: string[] = [];
const document = buildOpenApiDocument(catalog, {
  serverUrl: `${publicUrl}/api`,
  onUnrepresentable: (where, message) => unrepresentable.push(`${where}: ${message}`),
});

function routeOf(operation: Operation, explicit: boolean): OpenApiOperation {
  const route = document.paths[documentPath(operation, explicit)]?.[operation.method.toLowerCase()];
  if (!route) throw new Error(`${operation.name} is missing on ${documentPath(operation, explicit)}`);
  return route;
}

type Parameter = { name: string; in: string; required: boolean; description?: string; schema: Record<string, unknown> };

function parametersOf(route: OpenApiOperation): Parameter[] {
  return route.parameters.map((parameter) => {
    const ref = (parameter as { $ref?: string }).$ref;
    return (ref ? document.components.parameters![ref.split('/').at(-1)!] : parameter) as Parameter;
  });
}

/** Where a route's answer with this status is documented: inline, or shared in components/responses. */
function responsePointer(operation: Operation, explicit: boolean, status: string): string[] | undefined {
  const response = routeOf(operation, explicit).responses[status] as { $ref?: string } | undefined;
  if (!response) return undefined;
  if (response.$ref) return response.$ref.slice(2).split('/');
  return ['paths', documentPath(operation, explicit), operation.method.toLowerCase(), 'responses', status];
}

function responseOf(operation: Operation, explicit: boolean, status: number | string): any {
  return responsePointer(operation, explicit, String(status))?.reduce<any>((node, key) => node?.[key], document);
}

/** A field's `.describe()` text, also when it was given before `.nullable()` (zod then keeps it on the inner schema). */
function descriptionOf(field: z.ZodType): string | undefined {
  const converted = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' });
  return converted.description ?? (converted.anyOf as { description?: string }[] | undefined)?.find((branch) => branch.description)?.description;
}

/**
 * The paths of the properties under `schema` that carry no description: through nested objects, array items,
 * the branches of a union or a nullable field, and shared components (each visited once per path, so a
 * recursive component ends).
 */
function undescribedProperties(schema: any, path: string, seen: ReadonlySet<string> = new Set()): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  if (typeof schema.$ref === 'string') {
    if (seen.has(schema.$ref)) return [];
    const target = schema.$ref.replace('#/components/schemas/', '');
    return undescribedProperties(document.components.schemas![target], path, new Set([...seen, schema.$ref]));
  }
  const missing: string[] = [];
  for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
    const where = `${path}.${name}`;
    if (typeof property.description !== 'string' || property.description.trim() === '') missing.push(where);
    missing.push(...undescribedProperties(property, where, seen));
  }
  if (schema.items) missing.push(...undescribedProperties(schema.items, `${path}[]`, seen));
  for (const item of schema.prefixItems ?? []) missing.push(...undescribedProperties(item, `${path}[]`, seen));
  if (typeof schema.additionalProperties === 'object') missing.push(...undescribedProperties(schema.additionalProperties, `${path}.*`, seen));
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
    missing.push(...undescribedProperties(branch, path, seen));
  }
  return [...new Set(missing)];
}

/** The codes a documented error answer names, policy_denied included. */
function documentedCodes(operation: Operation, explicit: boolean, status: number): string[] {
  const response = responseOf(operation, explicit, status);
  const text = JSON.stringify(response?.content ?? {});
  const codes = [...text.matchAll(/"enum":\[([^\]]*)\]/g)].flatMap((match) => JSON.parse(`[${match[1]}]`) as string[]);
  if (text.includes('PolicyDeniedEnvelope')) codes.push('policy_denied');
  return codes;
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 to a real validator, every $ref resolving', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(() => validator.resolveRefs()).not.toThrow();
  });

  it('says how to authenticate: a bearer scheme for API keys and personal tokens, applied to every operation', () => {
    expect(document.components.securitySchemes).toMatchObject({ bearerAuth: { type: 'http', scheme: 'bearer' } });
    expect(JSON.stringify(document.components.securitySchemes)).toMatch(/gate_k_.*gate_p_/);
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    expect(document.servers).toEqual([{ url: `${publicUrl}/api` }]);
  });

  it('converts every catalog schema to JSON Schema without dropping a part', () => {
    expect(unrepresentable).toEqual([]);
  });

  it('holds every operation on both route shapes, and nothing else, with unique operationIds', () => {
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((route) => route.operationId));
    expect(ids).toHaveLength(catalog.length * 2);
    expect(new Set(ids).size).toBe(ids.length);
    for (const operation of catalog) {
      const id = operation.name.replace('.', '_');
      expect(routeOf(operation, false).operationId).toBe(id);
      expect(routeOf(operation, true).operationId).toBe(`${id}_in_organization`);
    }
    const families = [...new Set(catalog.map((operation) => operation.family))];
    expect(document.tags.map((tag) => tag.name)).toEqual(families);
  });

  it.each(cases)('%s: parameters and body carry every input field with its description', (_name, operation, explicit) => {
    const route = routeOf(operation, explicit);
    expect(route.summary).toContain(operation.summary);
    expect(route.description).toContain(operation.description);
    const parameters = parametersOf(route);
    if (explicit) expect(parameters).toContainEqual(expect.objectContaining({ name: 'slug', in: 'path', required: true }));
    const bodyRef = (route.requestBody as { $ref?: string } | undefined)?.$ref;
    const body = bodyRef && (document.components.requestBodies![bodyRef.split('/').at(-1)!] as any).content['application/json'].schema;
    for (const [field, schema] of Object.entries(operation.input.shape as Record<string, z.ZodType>)) {
      const described = descriptionOf(schema);
      const parameter = parameters.find((parameter) => parameter.name === field);
      if (field === 'if_match') {
        expect(parameters.find((parameter) => parameter.name === 'If-Match')).toMatchObject({ in: 'header', required: false, description: described });
        expect(parameter).toBeUndefined();
        expect(body?.properties.if_match).toBeUndefined();
      } else if (pathParameters(operation.path).includes(field)) {
        expect(parameter).toMatchObject({ in: 'path', required: true });
        expect(parameter?.description).toBe(described);
      } else if (operation.method === 'GET' || operation.method === 'DELETE') {
        expect(parameter).toMatchObject({ in: 'query', required: !schema.safeParse(undefined).success });
        expect(parameter?.description).toBe(described);
      } else {
        expect(body?.properties[field], `${field} in the body`).toBeDefined();
        expect(body.properties[field].description).toBe(described);
      }
    }
    const idempotency = parameters.some((parameter) => parameter.name === 'Idempotency-Key' && parameter.in === 'header');
    expect(idempotency).toBe(operation.kind === 'gated_write');
  });

  it.each(cases)('%s: documents every answer its kind can give', (_name, operation, explicit) => {
    const route = routeOf(operation, explicit);
    const statuses = Object.keys(route.responses).map(Number);
    const writesBody = operation.method === 'POST' || operation.method === 'PATCH';
    const success = operation.kind === 'gated_write' ? operation.successStatus : 200;
    const expected = [success, 401, 403, 422, 429, 500];
    if (explicit || pathParameters(operation.path).length > 0) expected.push(404);
    if (writesBody) expected.push(400, 413, 415);
    if (operation.kind !== 'read') expected.push(409);
    if (operation.kind === 'gated_write') expected.push(202, 503);
    expect(statuses.sort()).toEqual(expect.arrayContaining(expected.sort()));

    // Each documented code belongs to its status, and the refusals of the route's posture are there.
    for (const status of statuses.filter((status) => status >= 400)) {
      for (const code of documentedCodes(operation, explicit, status)) expect([code, errorStatus[code as keyof typeof errorStatus]]).toEqual([code, status]);
    }
    const codes = statuses.flatMap((status) => documentedCodes(operation, explicit, status));
    expect(codes).toEqual(expect.arrayContaining(['unauthorized', 'api_access_disabled', 'validation_failed', 'internal_error']));
    if (explicit) expect(codes).toContain('organization_mismatch');
    if (operation.kind === 'gated_write') expect(codes).toEqual(expect.arrayContaining(['read_only_key', 'policy_denied', 'idempotency_key_reused', 'conflict']));
    if (operation.kind === 'person_action') expect(codes).toEqual(expect.arrayContaining(['person_required', 'conflict']));
    if (operation.feature) expect(codes).toContain('feature_not_in_plan');

    const data = responseOf(operation, explicit, success).content['application/json'].schema;
    expect(data.properties.success).toEqual({ const: true });
    expect('page' in data.properties).toBe(operation.kind === 'read' && operation.list);
    if (operation.kind === 'gated_write') {
      const held = responseOf(operation, explicit, 202);
      expect(held.headers.Location).toBeDefined();
      expect(held.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PendingReviewEnvelope' });
    }
  });

  it.each(catalog.map((operation) => [operation.name, operation] as const))(
    '%s: every field of its answer has a description an agent can read',
    (name, operation) => {
      const success = operation.kind === 'gated_write' ? operation.successStatus : 200;
      const data = responseOf(operation, false, success).content['application/json'].schema.properties.data;
      expect(undescribedProperties(data, 'data'), `${name}: fields of the answer without a description`).toEqual([]);
    },
  );

  it.each(cases)('%s: every answer to an authenticated request documents the rate-limit headers; 429 adds Retry-After', (_name, operation, explicit) => {
    const limitHeaders = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
    for (const [status, answer] of Object.entries(routeOf(operation, explicit).responses)) {
      const headers = Object.keys(responseOf(operation, explicit, status).headers ?? {});
      // Refused before the request is counted: no token, or a body that could not be read.
      if (['400', '401', '413', '415', '500'].includes(status)) expect(headers, status).not.toContain('X-RateLimit-Limit');
      else expect(headers, `${status} ${JSON.stringify(answer)}`).toEqual(expect.arrayContaining(limitHeaders));
    }
    expect(Object.keys(responseOf(operation, explicit, 429).headers)).toContain('Retry-After');
    expect(documentedCodes(operation, explicit, 429)).toContain('rate_limited');
    if (operation.kind === 'gated_write') expect(documentedCodes(operation, explicit, 429)).toContain('review_queue_full');
  });

  it('changes only with review: the document as served is the committed snapshot', async () => {
    await expect(`${JSON.stringify(document, null, 2)}\n`).toMatchFileSnapshot('__snapshots__/openapi.json');
  });
});

describe('the served document and the answers it describes', () => {
  let h: Harness;
  let acme: TestOrganization;
  let globex: TestOrganization;
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  const documentId = 'https://gatehouse.test/openapi.json';

  beforeAll(async () => {
    h = await startHarness();
    [acme, globex] = await Promise.all([h.createOrganization(), h.createOrganization()]);
    ajv.addSchema({ ...structuredClone(document), $id: documentId } as never);
  });
  afterAll(() => h?.close());

  /** Whatever a route answered, the document has that status and the body fits its schema. */
  function expectDocumented(operation: Operation, explicit: boolean, response: LightMyRequestResponse): void {
    const status = String(response.statusCode);
    const context = `${operation.method} ${documentPath(operation, explicit)} answered ${status} ${response.body.slice(0, 300)}`;
    const documented = responsePointer(operation, explicit, status);
    expect(documented, context).toBeDefined();
    const pointer = [...documented!, 'content', 'application/json', 'schema']
      .map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1')))
      .join('/');
    const validate = ajv.getSchema(`${documentId}#/${pointer}`)!;
    expect(validate(json(response)) ? [] : validate.errors, context).toEqual([]);
  }

  const urlOf = (operation: Operation, slug: string | undefined, query = '') =>
    `/api/v1${slug ? `/organizations/${slug}` : ''}${operation.path.replace(/:([a-z_]+)/g, 'unknown')}${query}`;

  const tokenFor = (operation: Operation) => (operation.access.apiKey ? acme.readWriteToken : acme.reviewerToken);

  it('serves the document at GET /api/openapi.json without a token', async () => {
    const response = await h.request({ method: 'GET', url: '/api/openapi.json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(json<OpenApiDocument>(response)).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it('gives the playground the same operations, called on the origin that serves it', async () => {
    // The playground is for signed-in people; its document is theirs too.
    const person = await addPerson(h.db, acme.organization, 'member');
    const session = await signIn(h.app, acme.organization, person);
    const playground = json<OpenApiDocument>(await session.request({ method: 'GET', url: '/api/docs/json' }));
    expect(playground.servers).toEqual([{ url: '/api', description: 'This server' }]);
    expect(playground.paths).toEqual(JSON.parse(JSON.stringify(document.paths)));
  });

  it.each(cases)('%s: answers only what the document says', async (_name, operation, explicit) => {
    const slug = explicit ? acme.organization.slug : undefined;
    const payload = operation.method === 'POST' || operation.method === 'PATCH' ? {} : undefined;
    const send = (token: string | undefined, options: { slug?: string; query?: string; payload?: unknown } = {}) =>
      h.request({ method: operation.method, url: urlOf(operation, options.slug ?? slug, options.query), token, payload: options.payload ?? payload });

    const anonymous = await send(undefined);
    expect(anonymous.statusCode).toBe(401);
    expectDocumented(operation, explicit, anonymous);
    expectDocumented(operation, explicit, await send(tokenFor(operation)));
    const unknownField = payload ? await send(tokenFor(operation), { payload: { not_a_field: 1 } }) : await send(tokenFor(operation), { query: '?not_a_field=1' });
    expectDocumented(operation, explicit, unknownField);
    if (explicit) {
      const elsewhere = await send(tokenFor(operation), { slug: globex.organization.slug });
      expect(json(elsewhere).error.code).toBe('organization_mismatch');
      expectDocumented(operation, explicit, elsewhere);
    }
    if (operation.kind === 'gated_write') {
      const readOnly = await send(acme.readOnlyToken);
      expect(json(readOnly).error.code).toBe('read_only_key');
      expectDocumented(operation, explicit, readOnly);
    }
    if (operation.kind === 'person_action') {
      const key = await send(acme.readWriteToken);
      expect(json(key).error.code).toBe('person_required');
      expectDocumented(operation, explicit, key);
    }
  });

  it('documents the three answers of a gated write as the policy gives them (allow, review, deny)', async () => {
    const create = catalog.find((operation) => operation.name === 'tasks.create')!;
    for (const [title, status] of [['documented allow', 201], ['review documented', 202], ['deny documented', 403]] as const) {
      for (const explicit of [false, true]) {
        const response = await h.request({
          method: 'POST',
          url: urlOf(create, explicit ? acme.organization.slug : undefined),
          token: acme.readWriteToken,
          payload: { title },
        });
        expect(response.statusCode).toBe(status);
        if (status === 202) expect(response.headers.location).toBe(json(response).review.url);
        expectDocumented(create, explicit, response);
      }
    }
  });
});
