import fc from 'fast-check';
import type { SentRequest } from './answers';
import { headerSafe, queryString } from './encoding';
import { fillPath, pathParameterNames, type RestRoute } from './rest-routes';
import { edgeDates, fieldValue, malformedValues, objectFor, oddStrings, oddValues, validObject, validValue, type JsonSchema } from './schema-values';

// REST requests for every route of the served document: for each field, parameter and header the malformed
// values its schema rules out (with the refusal they must get), odd values it allows, and random requests that
// mix them all.

export interface RestFuzzContext {
  /** The token the operation's caller holds: the read-write key, or a reviewer's personal token for a person's action. */
  tokenFor(route: RestRoute): string;
  /** Credentials of the same organization that may call less (a read-only key, a member). */
  otherTokens: string[];
  slug: string;
  otherSlug: string;
  /** A real record of the route's family where the organization has one, else some id. */
  recordId(route: RestRoute): string;
  recordIds: string[];
}

export interface FuzzCase extends SentRequest {
  /** The refusal the case must get, when the case is malformed beyond doubt. */
  expected?: { status: number; code: string };
  /** What of the route the case varies (a field, a parameter, a header), for sampling (sampling.ts). */
  dimension?: string;
}

const invalid = { status: 422, code: 'validation_failed' };
const unauthorized = { status: 401, code: 'unauthorized' };

interface CaseParts {
  label: string;
  path?: Record<string, string>;
  query?: readonly (readonly [string, string])[];
  /** A JSON value for the body, or `raw` text sent as it is. */
  body?: { json: unknown } | { raw: string };
  /** null: no Content-Type at all. */
  contentType?: string | null;
  headers?: Record<string, string>;
  /** null: no Authorization header. */
  token?: string | null;
  method?: string;
  expected?: FuzzCase['expected'];
}

const takesBody = (route: RestRoute) => route.method === 'POST' || route.method === 'PATCH';

export function buildCase(route: RestRoute, context: RestFuzzContext, parts: CaseParts): FuzzCase {
  const values: Record<string, string> = { slug: context.slug };
  for (const name of pathParameterNames(route.template)) if (name !== 'slug') values[name] = context.recordId(route);
  const url = fillPath(route.template, { ...values, ...parts.path }) + queryString(parts.query ?? []);
  const headers: Record<string, string> = {};
  const token = parts.token === undefined ? context.tokenFor(route) : parts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (parts.body) body = 'raw' in parts.body ? parts.body.raw : JSON.stringify(parts.body.json);
  else if (route.body && takesBody(route)) body = JSON.stringify(validObject(route.body));
  if (body !== undefined && parts.contentType !== null) headers['content-type'] = parts.contentType ?? 'application/json';
  Object.assign(headers, parts.headers);
  return { label: `${route.method} ${route.template} ${parts.label}`, method: parts.method ?? route.method, url, headers, body, expected: parts.expected };
}

const nonObjectBodies: [string, string][] = [
  ['an array', '[{"fuzz": 1}]'],
  ['a number', '42'],
  ['a string', '"fuzz"'],
  ['null', 'null'],
  ['true', 'true'],
];

const brokenJson: [string, string][] = [
  ['truncated JSON', '{"title": "fuzz",'],
  ['JSON with trailing text', '{} fuzz'],
  ['single-quoted JSON', "{'title': 'fuzz'}"],
  ['JSON with NaN', '{"n": NaN}'],
  ['JSON with a comment', '{/* fuzz */}'],
  ['a __proto__ key', '{"__proto__": {"admin": true}}'],
  ['a constructor.prototype key', '{"constructor": {"prototype": {"admin": true}}}'],
];

/** Bodies the parser reads but that probe it: a BOM, depth, huge numbers, duplicate keys, whitespace only. */
const oddBodies: [string, string][] = [
  ['a byte-order mark', '\ufeff{}'],
  ['arrays nested 50,000 deep', `{"tags": ${'['.repeat(50_000)}${']'.repeat(50_000)}}`],
  ['a number past float range', '{"fuzz": 1e400}'],
  ['a duplicate key', '{"fuzz": 1, "fuzz": 2}'],
  ['whitespace only', '   '],
  ['an escaped NUL key', '{"\\u0000": 1}'],
];

const refusedMediaTypes = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=fuzz', 'application/xml', 'application/jsonfuzz'];
const oddMediaTypes = ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1', 'application/json;;;', 'application/vnd.api+json', null];

const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** Cursors this API never gave out: garbage, wrong shapes, and shapes right enough to reach the query. */
export const garbledCursors: { cursor: string; refused: boolean }[] = [
  { cursor: 'not-a-cursor', refused: true },
  { cursor: '!!!', refused: true },
  { cursor: 'x'.repeat(201), refused: true },
  { cursor: encode('{"id": 1}'), refused: true },
  { cursor: encode('task_'), refused: true },
  { cursor: encode('abc|task_01'), refused: true },
  { cursor: encode(`task_${'0'.repeat(26)}`), refused: false },
  { cursor: encode(`zz_${'z'.repeat(26)}`), refused: false },
  { cursor: encode(`99999999999999999|task_${'0'.repeat(26)}`), refused: false },
  { cursor: encode(`-99999999999999999|task_${'0'.repeat(26)}`), refused: false },
  { cursor: encode(`0|task_${'0'.repeat(26)}`), refused: false },
  { cursor: `${encode(`task_${'0'.repeat(26)}`)}====`, refused: false },
];

/** Query values the parameter must refuse, as text (the query has no types: numbers and words arrive as strings). */
function malformedQueryValues(schema: JsonSchema): { label: string; value: string }[] {
  const values: { label: string; value: string }[] = [];
  if (schema.enum) values.push({ label: 'not one of its choices', value: 'not-a-choice' });
  if (schema.maxLength !== undefined) values.push({ label: `longer than ${schema.maxLength}`, value: 'x'.repeat(schema.maxLength + 1) });
  if (schema.type === 'integer') {
    for (const value of ['abc', '1.5', '0', '-1', '1e3', '', String(schema.maximum ?? 1e9) + '1']) values.push({ label: `"${value}"`, value });
  }
  if (schema.format === 'date') values.push({ label: 'not a day', value: '2031-02-30' }, { label: 'a word for a day', value: 'tomorrow' });
  if (schema.format === 'date-time') values.push({ label: 'no offset', value: '2031-03-14T09:00:00' }, { label: 'a word for an instant', value: 'now' });
  return values;
}

function oddQueryValues(schema: JsonSchema): { label: string; value: string }[] {
  if (schema.type === 'integer') return ['0x10', ' 5 ', '+7', '007'].map((value) => ({ label: `"${value}"`, value }));
  if (schema.format === 'date' || schema.format === 'date-time') return edgeDates[schema.format].map((value) => ({ label: `the edge value ${value}`, value }));
  if (schema.enum || schema.format) return [];
  return oddStrings.filter(({ value }) => (value as string).length <= (schema.maxLength ?? Infinity)).map(({ label, value }) => ({ label, value: value as string }));
}

/** Every field, parameter and header of one route, each malformed in every way its schema rules out. */
export function fieldCases(route: RestRoute, context: RestFuzzContext): FuzzCase[] {
  const cases: FuzzCase[] = [];
  const add = (dimension: string, parts: CaseParts) => cases.push({ ...buildCase(route, context, parts), dimension: `${route.method} ${route.template} ${dimension}` });

  if (route.body && takesBody(route)) {
    const valid = validObject(route.body);
    for (const [name, schema] of Object.entries(route.body.properties ?? {})) {
      for (const { label, value } of malformedValues(schema)) add(`${name} malformed`, { label: `${name}: ${label}`, body: { json: { ...valid, [name]: value } }, expected: invalid });
      for (const { label, value } of oddValues(schema)) add(`${name} odd`, { label: `${name}: ${label}`, body: { json: { ...valid, [name]: value } } });
    }
    for (const name of route.body.required ?? []) {
      const { [name]: _left, ...rest } = valid;
      add('shape', { label: `without ${name}`, body: { json: rest }, expected: invalid });
    }
    add('shape', { label: 'an unknown field', body: { json: { ...valid, fuzz_unknown: 'x' } }, expected: invalid });
    if (route.method === 'PATCH') add('id in the body', { label: 'an id in the body', body: { json: { ...valid, id: context.recordIds[0] } }, expected: invalid });
    for (const [label, raw] of nonObjectBodies) add('not an object', { label: `a body that is ${label}`, body: { raw }, expected: invalid });
    for (const [label, raw] of brokenJson) add('broken JSON', { label, body: { raw }, expected: { status: 400, code: 'invalid_json' } });
    for (const [label, raw] of oddBodies) add('odd body', { label, body: { raw } });
    for (const type of refusedMediaTypes) add('media type', { label: `Content-Type ${type}`, body: { raw: 'title=fuzz' }, contentType: type, expected: { status: 415, code: 'unsupported_media_type' } });
    for (const type of oddMediaTypes) add('odd media type', { label: `Content-Type ${type ?? '(none)'}`, body: { json: valid }, contentType: type });
  }

  const query = route.parameters.filter((parameter) => parameter.in === 'query');
  if (route.method === 'GET' || route.method === 'DELETE') {
    for (const { name, schema } of query) {
      for (const { label, value } of malformedQueryValues(schema)) add(`?${name}`, { label: `?${name}: ${label}`, query: [[name, value]], expected: invalid });
      for (const { label, value } of oddQueryValues(schema)) add(`?${name} odd`, { label: `?${name}: ${label}`, query: [[name, value]] });
      const sample = String(validValue(schema));
      add(`?${name}`, { label: `?${name} twice`, query: [[name, sample], [name, sample]], expected: invalid });
    }
    if (query.some((parameter) => parameter.name === 'cursor')) {
      for (const { cursor, refused } of garbledCursors) add('cursor', { label: `?cursor=${cursor.slice(0, 24)}`, query: [['cursor', cursor]], expected: refused ? invalid : undefined });
    }
    add('unknown parameter', { label: 'an unknown parameter', query: [['fuzz_unknown', '1']], expected: invalid });
    add('unknown parameter', { label: 'a bracketed parameter', query: [['limit[$gt]', '1']], expected: invalid });
  }

  for (const name of pathParameterNames(route.template).filter((candidate) => candidate !== 'slug')) {
    const ids: [string, string][] = [
      ['101 characters', 'x'.repeat(101)],
      ['100 characters', 'x'.repeat(100)],
      ['an encoded slash', 'a/b'],
      ['dots', '..'],
      ['a space', ' '],
      ['a percent sign', '%'],
      ...context.recordIds.map((id): [string, string] => [`the id ${id.split('_')[0]}_…`, id]),
      ...oddStrings.map(({ label, value }): [string, string] => [label, value as string]),
    ];
    for (const [label, value] of ids) add(`{${name}}`, { label: `{${name}}: ${label}`, path: { [name]: value } });
  }

  const headerNames = route.parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name);
  if (headerNames.includes('Idempotency-Key')) {
    for (const key of ['', 'x'.repeat(256), 'has a space', '\t', 'k\u007f']) {
      add('Idempotency-Key', { label: `Idempotency-Key of ${key.length} odd characters`, headers: { 'idempotency-key': key }, expected: invalid });
    }
  }
  if (headerNames.includes('If-Match')) {
    add('If-Match', { label: 'If-Match of 101 characters', headers: { 'if-match': 'x'.repeat(101) }, expected: invalid });
    for (const tag of ['garbage', '"abc"', '*', 'W/"1"', '"99999"', '"-1"', '"1", "2"']) add('If-Match', { label: `If-Match ${tag}`, headers: { 'if-match': tag } });
  }
  return cases;
}

/** The explicit-organization shape: the organization named must be the token's own. */
export function organizationCases(route: RestRoute, context: RestFuzzContext): FuzzCase[] {
  const mismatch = { status: 404, code: 'organization_mismatch' };
  const cases = [
    buildCase(route, context, { label: 'the own slug', path: { slug: context.slug } }),
    buildCase(route, context, { label: "another organization's slug", path: { slug: context.otherSlug }, expected: mismatch }),
    buildCase(route, context, { label: 'an upper-case slug', path: { slug: context.slug.toUpperCase() }, expected: mismatch }),
    buildCase(route, context, { label: 'a slug of 101 characters', path: { slug: 'x'.repeat(101) } }),
    ...oddStrings.map(({ label, value }) => buildCase(route, context, { label: `a slug with ${label}`, path: { slug: value as string }, expected: mismatch })),
  ];
  return cases.map((item) => ({ ...item, dimension: `${route.method} ${route.template} slug` }));
}

/** Credentials that are no credentials: each must get 401, whatever the route. */
export function authorizationCases(route: RestRoute, context: RestFuzzContext): FuzzCase[] {
  const token = context.tokenFor(route);
  const headers: [string, string | null][] = [
    ['none', null],
    ['a bare scheme', 'Bearer'],
    ['an empty token', 'Bearer '],
    ['a bare prefix', 'Bearer gate_k_'],
    ['a mangled token', `Bearer ${token.slice(0, -3)}zzz`],
    ['the token without its scheme', token],
    ['another scheme', 'Basic ZnV6ejpmdXp6'],
    ['a token of 8,000 characters', `Bearer gate_k_${'A'.repeat(8000)}`],
    ['two tokens', `Bearer ${token}, Bearer ${token}`],
  ];
  return headers.map(([label, value]) => ({
    ...buildCase(route, context, { label: `Authorization: ${label}`, token: null, headers: value === null ? {} : { authorization: value }, expected: unauthorized }),
    dimension: `${route.method} ${route.template} Authorization`,
  }));
}

const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom(...oddStrings.map(({ value }) => value as string)));
const longText = fc.string({ minLength: 95, maxLength: 130 });
const anyBody = fc.jsonValue({ maxDepth: 2 }).map((json) => ({ json }));
const headerText = fc.oneof(fc.string({ unit: 'binary-ascii', maxLength: 40 }).map(headerSafe), fc.uuid(), fc.constant('x'.repeat(256)));

/** A random request for a route: any mix of valid, malformed and odd parts, weighted to reach the operation. */
export function randomCase(route: RestRoute, context: RestFuzzContext): fc.Arbitrary<FuzzCase> {
  const text = anyText;
  const pathValue = fc.oneof(
    { weight: 4, arbitrary: fc.constant(context.recordId(route)) },
    { weight: 2, arbitrary: fc.constantFrom(...context.recordIds) },
    { weight: 2, arbitrary: text },
    { weight: 1, arbitrary: longText },
  );
  const path = fc.record(Object.fromEntries(pathParameterNames(route.template).filter((name) => name !== 'slug').map((name) => [name, pathValue])));
  const slug = route.explicitOrganization
    ? fc.oneof({ weight: 6, arbitrary: fc.constant(context.slug) }, { weight: 1, arbitrary: fc.constant(context.otherSlug) }, { weight: 1, arbitrary: text })
    : fc.constant(context.slug);
  const queryParameters = route.parameters.filter((parameter) => parameter.in === 'query');
  const queryPair = fc.oneof(
    { weight: 5, arbitrary: queryParameters.length ? fc.constantFrom(...queryParameters).chain(({ name, schema }) => queryValue(schema).map((value) => [name, value] as const)) : fc.constant(['fuzz', '1'] as const) },
    { weight: 1, arbitrary: fc.constantFrom(...garbledCursors).map(({ cursor }) => ['cursor', cursor] as const) },
    { weight: 1, arbitrary: fc.tuple(text, text) },
  );
  const body = route.body && takesBody(route)
    ? fc.oneof(
        { weight: 8, arbitrary: objectFor(route.body).map((json) => ({ json })) },
        { weight: 1, arbitrary: anyBody },
        { weight: 1, arbitrary: fc.constantFrom(...brokenJson, ...oddBodies.slice(0, 1), ...nonObjectBodies).map(([, raw]) => ({ raw })) },
      )
    : fc.constant(undefined);
  const headerNames = route.parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name);
  return fc
    .record({
      path,
      slug,
      query: route.method === 'GET' || route.method === 'DELETE' ? fc.array(queryPair, { maxLength: 4 }) : fc.constant<(readonly [string, string])[]>([]),
      body,
      contentType: fc.oneof({ weight: 12, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom(...refusedMediaTypes, ...oddMediaTypes) }),
      token: fc.oneof(
        { weight: 12, arbitrary: fc.constant(context.tokenFor(route)) },
        { weight: 1, arbitrary: fc.constantFrom(...context.otherTokens) },
        { weight: 1, arbitrary: fc.constantFrom('gate_k_', 'nonsense', `gate_p_${'0'.repeat(40)}`) },
      ),
      idempotencyKey: headerNames.includes('Idempotency-Key') ? fc.option(headerText, { freq: 3 }) : fc.constant(null),
      ifMatch: headerNames.includes('If-Match') ? fc.option(fc.oneof(headerText, fc.constantFrom('"1"', '*', 'W/"1"')), { freq: 3 }) : fc.constant(null),
    })
    .map((parts) =>
      buildCase(route, context, {
        label: '(random)',
        path: { ...parts.path, slug: parts.slug },
        query: parts.query,
        body: parts.body,
        contentType: parts.body ? parts.contentType : undefined,
        token: parts.token,
        headers: {
          ...(parts.idempotencyKey !== null ? { 'idempotency-key': parts.idempotencyKey } : {}),
          ...(parts.ifMatch !== null ? { 'if-match': parts.ifMatch } : {}),
        },
      }),
    );
}

function queryValue(schema: JsonSchema): fc.Arbitrary<string> {
  const listed = [...malformedQueryValues(schema), ...oddQueryValues(schema)].map(({ value }) => value);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(String(validValue(schema))) },
    { weight: 3, arbitrary: listed.length ? fc.constantFrom(...listed) : fc.constant('') },
    { weight: 1, arbitrary: fieldValue(schema).map((value) => (typeof value === 'string' ? value : JSON.stringify(value) ?? '')) },
  );
}
