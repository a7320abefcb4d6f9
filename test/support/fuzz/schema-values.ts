import fc from 'fast-check';

// Values for a field, read from the JSON Schema the service serves for it (OpenAPI 3.1 and the MCP tools'
// draft-7 alike): one that should pass, ones of the wrong type or size that must be refused, and odd ones that
// the schema allows but the layers below (PostgreSQL's text and jsonb, date arithmetic) might not.

export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  default?: unknown;
}

export interface LabelledValue {
  label: string;
  value: unknown;
}

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';

const samples: Record<Exclude<JsonType, 'integer'>, unknown> = {
  string: 'fuzz',
  number: 4.5,
  boolean: true,
  null: null,
  array: ['fuzz'],
  object: { fuzz: 1 },
};

function options(schema: JsonSchema): JsonSchema[] {
  return schema.anyOf ?? schema.oneOf ?? [schema];
}

function typesOf(schema: JsonSchema): JsonType[] {
  return options(schema).flatMap((option) => {
    if (option.enum || option.const !== undefined) return ['string'];
    if (option.type === undefined) return ['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'];
    return (Array.isArray(option.type) ? option.type : [option.type]) as JsonType[];
  });
}

/** What the field's description promises, or something close: enough to make the rest of a body readable. */
export function validValue(schema: JsonSchema): unknown {
  const option = options(schema).find((candidate) => candidate.type !== 'null') ?? schema;
  if (option.const !== undefined) return option.const;
  if (option.enum) return option.enum[0];
  if (option.default !== undefined) return option.default;
  const type = Array.isArray(option.type) ? option.type[0] : option.type;
  switch (type) {
    case 'integer':
    case 'number':
      return Math.min(Math.max(option.minimum ?? 1, 1), option.maximum ?? Number.MAX_SAFE_INTEGER);
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: option.minItems ?? 0 }, () => validValue(option.items ?? {}));
    case 'object':
      return validObject(option);
    default:
      return validString(option);
  }
}

export function validObject(schema: JsonSchema): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of schema.required ?? []) body[name] = validValue(schema.properties?.[name] ?? {});
  return body;
}

function validString(schema: JsonSchema): string {
  switch (schema.format) {
    case 'date':
      return '2031-03-14';
    case 'date-time':
      return '2031-03-14T09:00:00Z';
    case 'email':
      return 'fuzz@example.com';
    case 'uri':
      return 'https://example.com/fuzz';
    default:
      return 'fuzz'.padEnd(schema.minLength ?? 0, 'z').slice(0, schema.maxLength ?? 4);
  }
}

/** Values the field must refuse: every other JSON type, and each bound of its size and shape overstepped. */
export function malformedValues(schema: JsonSchema): LabelledValue[] {
  const accepted = new Set(typesOf(schema));
  const values: LabelledValue[] = [];
  for (const [type, value] of Object.entries(samples)) {
    const acceptedAsIs = accepted.has(type as JsonType) || (type === 'number' && accepted.has('integer') && Number.isInteger(value));
    if (!acceptedAsIs) values.push({ label: `a ${type}`, value });
  }
  for (const option of options(schema)) {
    if (option.enum) values.push({ label: 'not one of its choices', value: 'not-a-choice' });
    if (option.maxLength !== undefined) values.push({ label: `longer than ${option.maxLength}`, value: 'x'.repeat(option.maxLength + 1) });
    if ((option.minLength ?? 0) > 0) values.push({ label: 'empty', value: '' });
    if (option.format === 'date') values.push({ label: 'not a day', value: '2031-02-30' }, { label: 'a word for a day', value: 'tomorrow' });
    if (option.format === 'date-time') values.push({ label: 'no offset', value: '2031-03-14T09:00:00' }, { label: 'a day for an instant', value: '2031-03-14' });
    if (option.format === 'email') values.push({ label: 'not an address', value: 'not-an-address' });
    // Not a string of digits: `limit` takes one on purpose (a query string carries numbers so), in MCP as in REST.
    if (option.type === 'integer') values.push({ label: 'a fraction', value: 1.5 }, { label: 'a numeric string with a sign', value: '-7' });
    if (option.minimum !== undefined) values.push({ label: 'below its minimum', value: option.minimum - 1 });
    if (option.maximum !== undefined) values.push({ label: 'above its maximum', value: option.maximum + 1 });
    if (option.type === 'array') {
      const max = option.maxItems ?? 1000;
      values.push({ label: `more than ${max} items`, value: Array.from({ length: max + 1 }, () => validValue(option.items ?? {})) });
      if ((option.minItems ?? 0) > 0) values.push({ label: 'no items', value: [] });
      for (const item of malformedValues(option.items ?? {}).slice(0, 3)) values.push({ label: `an item that is ${item.label}`, value: [item.value] });
    }
    if (option.type === 'object' && option.additionalProperties === false) {
      values.push({ label: 'an unknown nested field', value: { ...validObject(option), fuzz_unknown: true } });
    }
  }
  return values;
}

/**
 * Text the schema allows that tends to break what lies under it: NUL and lone surrogates (PostgreSQL's text and
 * jsonb refuse them), direction overrides, combining marks, a BOM, characters outside the BMP.
 */
export const oddStrings: readonly LabelledValue[] = [
  { label: 'a NUL', value: 'fuzz\u0000nul' },
  { label: 'a lone surrogate', value: 'fuzz\ud800' },
  { label: 'a right-to-left override', value: '\u202efuzz' },
  { label: 'combining marks', value: 'e\u0301\u0301\u0301' },
  { label: 'a byte-order mark', value: '\ufefffuzz' },
  { label: 'astral characters', value: '𝔣𝔲𝔷𝔷 🦀' },
  { label: 'a noncharacter', value: 'fuzz\uffff' },
  { label: 'control characters', value: '\u0001\u001b[31m\r\n' },
  { label: 'SQL', value: "'; DROP TABLE tasks; --" },
  { label: 'a LIKE pattern', value: '%_\\' },
];

/** Day and instant values the schema's pattern allows that a database or a date library may still refuse. */
export const edgeDates: Record<'date' | 'date-time', readonly string[]> = {
  date: ['0000-01-01', '9999-12-31', '1000-02-29'],
  'date-time': ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999+23:59', '1970-01-01T00:00:00-23:59'],
};

/** Schema-allowed values that probe the layers below: odd text for strings, edge days for dates. */
export function oddValues(schema: JsonSchema): LabelledValue[] {
  const option = options(schema).find((candidate) => candidate.type !== 'null') ?? schema;
  if (option.type !== 'string' || option.enum) return [];
  const fits = (value: string) => value.length >= (option.minLength ?? 0) && value.length <= (option.maxLength ?? Infinity);
  if (option.format === 'date' || option.format === 'date-time') {
    return edgeDates[option.format].map((value) => ({ label: `the edge value ${value}`, value }));
  }
  if (option.format) return [];
  return oddStrings.filter(({ value }) => fits(value as string));
}

// Made once: building fast-check's recursive arbitraries for every field of every route costs seconds.
const anyJson = fc.jsonValue({ maxDepth: 2 });
const anyText = fc.string({ unit: 'binary', maxLength: 40 });
const unknownFields = fc.option(fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }), { freq: 4 });

/** Any value for a field, weighted towards the ones that find faults: valid, malformed, odd, or anything at all. */
export function fieldValue(schema: JsonSchema): fc.Arbitrary<unknown> {
  const labelled = [...malformedValues(schema), ...oddValues(schema)].map((entry) => entry.value);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(validValue(schema)) },
    { weight: 4, arbitrary: labelled.length ? fc.constantFrom(...labelled) : fc.constant(null) },
    { weight: 1, arbitrary: anyJson },
    { weight: 1, arbitrary: anyText },
  );
}

/**
 * An object for a schema, mostly malformed: each known field left out, valid, or any of fieldValue's; now and
 * then an unknown field, or a required one missing.
 */
export function objectFor(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.entries(schema.properties ?? {});
  const valid = validObject(schema);
  return fc
    .record({
      chosen: fc.tuple(...fields.map(([name, field]) => fc.option(fieldValue(field), { nil: undefined, freq: 2 }).map((value) => [name, value] as const))),
      unknown: unknownFields,
      dropRequired: fc.boolean(),
    })
    .map(({ chosen, unknown, dropRequired }) => {
      const body: Record<string, unknown> = dropRequired ? {} : { ...valid };
      for (const [name, value] of chosen) if (value !== undefined) body[name] = value;
      return unknown ? { ...body, ...unknown } : body;
    });
}
