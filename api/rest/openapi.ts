import { families } from '../../domain/identity/abilities';
import { roles } from '../../domain/identity/actors';
import { isOfferedOn, pathParameters, templatedPath, type Operation } from '../catalog/operation';
import { JsonSchemaConverter, type JsonSchema, type UnrepresentableListener } from './json-schema';
import {
  envelopeSchemas,
  errorResponses,
  gatedWriteHeaders,
  pendingReviewResponse,
  rateLimitHeaderComponents,
  rateLimitHeaders,
} from './openapi-responses';
import { headerFields, type RestDialect } from './routes';

export interface OpenApiOptions {
  /** The dialect described: the agents' API (the default) or the console's, which the console's wire types come from. */
  via?: RestDialect['via'];
  /** The base the document's paths hang from: the agents' ends in /api (absolute, or `/api` for this origin), the console's is `/console/api`. */
  serverUrl: string;
  serverDescription?: string;
  /** Told about schema parts that JSON Schema cannot express; they are documented as `{}`. */
  onUnrepresentable?: UnrepresentableListener;
}

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string; description?: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: Record<string, Record<string, unknown>>;
};

export type OpenApiOperation = {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  parameters: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
};

const description = `Business data for AI agents, automation and scripts. Every write is gated by the organization's policy.

- **Tokens:** send \`Authorization: Bearer <token>\`, an API key (\`gate_k_…\`), a personal token (\`gate_p_…\`) or an OAuth access token issued for this API (its metadata: \`/.well-known/oauth-protected-resource/api\`; a 401 names it in \`WWW-Authenticate\`). \`GET /v1/me\` tells what a token may do.
- **Two route shapes:** every operation is served on \`/v1/…\` (the token's organization) and on \`/v1/organizations/{slug}/…\` (named explicitly; another organization's slug answers 404 \`organization_mismatch\`).
- **Answers:** \`{"success": true, "data": …}\`; lists add \`"page": {"next_cursor": …}\`. Errors: \`{"success": false, "error": {"code", "message", "details"?}}\`.
- **Gated writes:** the policy allows (the record), holds for a person's review (202 \`pending_review\` with the review and a \`Location\` header) or denies (403 \`policy_denied\`). Send an \`Idempotency-Key\` to make retries safe.
- **Limits:** each token has a per-minute ceiling and the organization a daily budget (REST and MCP together, reset at midnight in its time zone), set by its plan; \`GET /v1/me\` tells both. Every answer to an authenticated request carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (seconds) for the limit nearest exhaustion; past a limit the answer is 429 \`rate_limited\` with \`Retry-After\`.`;

const bearerAuth = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'gate_k_… (API key), gate_p_… (personal token), or an OAuth access token',
  description:
    'Send `Authorization: Bearer <token>`. **API keys** (`gate_k_…`, from `gatehouse key create`) are for agents, automation and scripts: each belongs to one organization, is read-only or read-write, and holds abilities such as `tasks.read` and `tasks.write`. **Personal tokens** (`gate_p_…`, from `gatehouse user token`) act as a person of the organization with their role; only they can approve or deny held writes. **OAuth access tokens** are issued to an app a person connected (authorization code with PKCE at `/oauth/authorize`, resource `…/api`); the app acts as a key with the abilities granted, its scopes, and a call outside them is answered 403 `insufficient_scope` with a scope challenge.',
};

const sessionCookie = {
  type: 'apiKey',
  in: 'cookie',
  name: 'gatehouse_session',
  description:
    "The session a person gets by signing in to the console (`__Host-gatehouse_session` over https). Every call that changes something also sends the session's `X-CSRF-Token` header.",
};

const consoleDescription = `The console's API: the catalog's operations offered to people, with a signed-in session where the agents' API takes a bearer token, always in the session's own organization. The same answers and errors as the agents' API. The console's wire types are generated from this document.`;

/** What tells the two dialects' documents apart; their operations are described alike. */
interface DocumentDialect {
  title: string;
  description: string;
  securitySchemes: Record<string, unknown>;
  /** Whether each operation is also on /v1/organizations/{slug}/…. */
  explicitOrganization: boolean;
}

const documentDialects: Record<RestDialect['via'], DocumentDialect> = {
  rest: { title: 'Gatehouse API', description, securitySchemes: { bearerAuth }, explicitOrganization: true },
  console: { title: 'Gatehouse console API', description: consoleDescription, securitySchemes: { sessionCookie }, explicitOrganization: false },
};

const organizationSlug = {
  name: 'slug',
  in: 'path',
  required: true,
  description: "The organization's slug (`GET /v1/me` tells it); it must be the token's own organization",
  schema: { type: 'string' },
};

const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key with the same body replays the first answer (with `Idempotent-Replayed: true`); with another body it is refused (422 `idempotency_key_reused`). Scoped to the organization and the API key.',
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
};


const etag = {
  description: "The record's version, quoted (e.g. `\"3\"`): send it back as `If-Match` to update or delete it safely",
  schema: { type: 'string' },
};

/**
 * The OpenAPI 3.1 document of a REST dialect: a loop over the operations it offers, for agents on both route
 * shapes, for the console on /v1/… alone.
 */
export function buildOpenApiDocument(catalog: readonly Operation[], options: OpenApiOptions): OpenApiDocument {
  const via = options.via ?? 'rest';
  const dialect = documentDialects[via];
  const operations = catalog.filter((operation) => isOfferedOn(operation, via));
  const schemas = new JsonSchemaConverter(options.onUnrepresentable);
  // What both route shapes of an operation share is written once, here, and referenced from each.
  const shared: SharedComponents = { responses: { PendingReview: pendingReviewResponse }, requestBodies: {} };
  const described = operations.map((operation) => ({ operation, parts: describeOperation(operation, schemas, shared) }));
  const paths: OpenApiDocument['paths'] = {};
  for (const explicitOrganization of dialect.explicitOrganization ? [false, true] : [false]) {
    for (const { operation, parts } of described) {
      const path = templatedPath(`${explicitOrganization ? '/organizations/:slug' : ''}${operation.path}`);
      (paths[path] ??= {})[operation.method.toLowerCase()] = {
        operationId: `${operation.name.replace(/\./g, '_')}${explicitOrganization ? '_in_organization' : ''}`,
        tags: [operation.family],
        summary: explicitOrganization ? `${operation.summary} (organization named in the path)` : operation.summary,
        description: parts.description,
        parameters: [
          ...(explicitOrganization ? [{ $ref: '#/components/parameters/OrganizationSlug' }] : []),
          ...parts.parameters,
        ],
        ...(parts.requestBody ? { requestBody: parts.requestBody } : {}),
        responses: { ...parts.successResponses, ...errorResponses(operation, explicitOrganization, shared.responses) },
      };
    }
  }

  const familyNames = [...new Set(operations.map((operation) => operation.family))];
  return {
    openapi: '3.1.0',
    info: { title: dialect.title, version: 'v1', description: dialect.description },
    servers: [{ url: options.serverUrl, ...(options.serverDescription ? { description: options.serverDescription } : {}) }],
    security: Object.keys(dialect.securitySchemes).map((scheme) => ({ [scheme]: [] })),
    tags: familyNames.map((name) => ({
      name,
      description:
        (families as Record<string, { description: string }>)[name]?.description ??
        operations.filter((operation) => operation.family === name).map((operation) => operation.summary).join('; '),
    })),
    paths,
    components: {
      securitySchemes: dialect.securitySchemes,
      parameters: { ...(dialect.explicitOrganization ? { OrganizationSlug: organizationSlug } : {}), IdempotencyKey: idempotencyKey },
      headers: rateLimitHeaderComponents,
      responses: shared.responses,
      requestBodies: shared.requestBodies,
      schemas: { ...envelopeSchemas, ...schemas.components },
    },
  };
}

interface SharedComponents {
  responses: Record<string, unknown>;
  requestBodies: Record<string, unknown>;
}

const ref = (kind: keyof SharedComponents, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** What both route shapes of an operation share: its parameters, body and success answers. */
function describeOperation(operation: Operation, schemas: JsonSchemaConverter, shared: SharedComponents) {
  const id = operation.name.replace(/\./g, '_');
  const inPath = pathParameters(operation.path);
  if (inPath.includes('slug')) {
    throw new Error(`${operation.name}: a path parameter named "slug" collides with the organization's in /v1/organizations/{slug}/…`);
  }
  const input = objectSchema(schemas.convert(operation.input, 'input', `${id}_input`), schemas, operation.name);
  const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((input.required ?? []) as string[]);
  const fromQuery = operation.method === 'GET' || operation.method === 'DELETE';

  const parameters: unknown[] = [];
  const body: Record<string, JsonSchema> = {};
  for (const [name, property] of Object.entries(properties)) {
    const header = headerFields[name];
    const where = inPath.includes(name) ? 'path' : header ? 'header' : fromQuery ? 'query' : undefined;
    if (!where) {
      body[name] = property;
      continue;
    }
    const { description: about, ...schema } = property;
    parameters.push({
      name: header ?? name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(about ? { description: about } : {}),
      schema,
    });
  }
  if (operation.kind === 'gated_write') parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const bodyRequired = [...required].filter((name) => name in body);
  const { properties: _all, required: _allRequired, ...objectKeywords } = input;
  if (Object.keys(body).length > 0) {
    shared.requestBodies[id] = {
      required: bodyRequired.length > 0,
      content: {
        'application/json': {
          schema: { ...objectKeywords, properties: body, ...(bodyRequired.length > 0 ? { required: bodyRequired } : {}) },
        },
      },
    };
  }

  const data = schemas.convert(operation.output, 'output', `${id}_output`);
  const list = operation.kind === 'read' && operation.list;
  const versioned = !list && 'version' in ((resolve(data, schemas).properties as object | undefined) ?? {});
  const headers = {
    ...(operation.kind === 'gated_write' ? gatedWriteHeaders : {}),
    ...(versioned ? { ETag: etag } : {}),
    ...rateLimitHeaders,
  };
  shared.responses[id] = {
    description:
      operation.kind === 'gated_write'
        ? 'The policy allowed the write and it was applied; `data` is its result'
        : list
          ? 'One page; pass `page.next_cursor` as `cursor` for the next (null on the last page)'
          : 'Success',
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['success', 'data', ...(list ? ['page'] : [])],
          properties: { success: { const: true }, data, ...(list ? { page: { $ref: '#/components/schemas/PageInfo' } } : {}) },
        },
      },
    },
  };
  const successResponses =
    operation.kind === 'gated_write'
      ? { [String(operation.successStatus)]: ref('responses', id), '202': ref('responses', 'PendingReview') }
      : { '200': ref('responses', id) };

  return {
    description: `${operation.description}\n\n${accessNote(operation)}`,
    parameters,
    requestBody: id in shared.requestBodies ? ref('requestBodies', id) : undefined,
    successResponses,
  };
}

/** A schema itself, or the shared component it refers to. */
function resolve(schema: JsonSchema, schemas: JsonSchemaConverter): JsonSchema {
  return typeof schema.$ref === 'string' ? (schemas.components[schema.$ref.replace('#/components/schemas/', '')] ?? {}) : schema;
}

function objectSchema(schema: JsonSchema, schemas: JsonSchemaConverter, name: string): JsonSchema {
  const target = resolve(schema, schemas);
  if (target.type !== 'object') throw new Error(`${name}: the input must be a zod object`);
  return target;
}

function accessNote(operation: Operation): string {
  const { apiKey, person } = operation.access;
  const keys = !apiKey
    ? 'API keys: never'
    : `API keys: ${apiKey.ability ? `with the \`${apiKey.ability}\` ability` : 'any'}${operation.kind === 'gated_write' ? ', read-write keys only' : ''}`;
  const people = !person
    ? 'personal tokens: never'
    : `personal tokens: ${roles.every((role) => person.roles.includes(role)) ? 'any' : `people with the role ${person.roles.join(', ')}`}`;
  const plan = operation.feature ? ` Only on plans with the \`${operation.feature}\` feature.` : '';
  return `**Access.** ${keys}; ${people}.${plan}`;
}
