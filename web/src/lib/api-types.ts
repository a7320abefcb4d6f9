// The console's wire types, read from the catalog's own schemas: api-types.gen.ts is generated from the OpenAPI
// document of the console's dialect (bin/console-types.ts) and not committed. These pick what a page needs from it,
// by the operation's id: its name with `_` for `.` (`reviews.get` is `reviews_get`).
import type { operations } from './api-types.gen';

export type OperationId = keyof operations;

type Json<Part> = Part extends { content: { 'application/json': infer Body } } ? Body : never;
/** The answer of a success: 200, or 201 for a write that creates. */
type Success<Responses> = Responses extends { 200: infer Answer } ? Answer : Responses extends { 201: infer Answer } ? Answer : never;

/** What an operation answers in the envelope's `data`. */
export type Data<Id extends OperationId> = Json<Success<operations[Id]['responses']>> extends { data: infer Value } ? Value : never;

/** One item of what a list answers. */
export type Item<Id extends OperationId> = Data<Id> extends readonly (infer One)[] ? One : never;

/** The JSON body an operation takes. */
export type Body<Id extends OperationId> = Json<NonNullable<operations[Id]['requestBody']>>;

/** The query parameters an operation takes (a list's filters, `limit` and `cursor`). */
export type Query<Id extends OperationId> = NonNullable<operations[Id]['parameters']['query']>;
