import { percentEncode } from './encoding';
import type { JsonSchema } from './schema-values';

// The REST routes as the served OpenAPI document tells them: every path and method, both route shapes, with
// their parameters and request body resolved from the document's components.

export interface RestParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface RestRoute {
  operationId: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** As the document writes it, e.g. `/v1/organizations/{slug}/tasks/{id}`. */
  template: string;
  /** Whether the organization is named in the path (`/v1/organizations/{slug}/…`). */
  explicitOrganization: boolean;
  parameters: RestParameter[];
  /** The JSON body's schema, for operations that take one. */
  body?: JsonSchema;
  /** Whether the document answers 202 (a gated write) or needs a person (approve, deny): who should call. */
  gated: boolean;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId: string; parameters?: unknown[]; requestBody?: unknown; responses: Record<string, unknown> }>>;
  components: Record<string, Record<string, unknown>>;
}

export function restRoutes(document: unknown): RestRoute[] {
  const doc = document as OpenApiDocument;
  const resolve = <T>(value: unknown): T => {
    const ref = (value as { $ref?: string } | null)?.$ref;
    if (!ref) return value as T;
    const [, section, name] = ref.replace('#/', '').split('/');
    return resolve<T>(doc.components[section!]![name!]);
  };
  return Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const body = operation.requestBody
        ? resolve<{ content: Record<string, { schema: unknown }> }>(operation.requestBody).content['application/json']?.schema
        : undefined;
      return {
        operationId: operation.operationId,
        method: method.toUpperCase() as RestRoute['method'],
        template,
        explicitOrganization: template.startsWith('/v1/organizations/{slug}'),
        parameters: (operation.parameters ?? []).map((parameter) => resolve<RestParameter>(parameter)),
        body: body ? resolve<JsonSchema>(body) : undefined,
        gated: '202' in operation.responses,
      };
    }),
  );
}

/** The path with its parameters filled in, each percent-encoded unless `raw` says it is already. */
export function fillPath(template: string, values: Record<string, string>, raw = false): string {
  return `/api${template.replace(/\{([a-z_]+)\}/g, (_match, name: string) => {
    const value = values[name] ?? '';
    return raw ? value : percentEncode(value);
  })}`;
}

export function pathParameterNames(template: string): string[] {
  return [...template.matchAll(/\{([a-z_]+)\}/g)].map((match) => match[1]!);
}
