import { z } from 'zod';

export type JsonSchema = { [keyword: string]: unknown };

/** Told about each part of a schema that JSON Schema cannot say (a Date, a transform's output), which becomes `{}`. */
export type UnrepresentableListener = (where: string, message: string) => void;

/**
 * Turns catalog schemas into JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) for one document.
 * zod writes shared (`.meta({ id })`) and recursive parts as local `$defs`, whose `#/$defs/…` references
 * would point at the document's root once embedded; they move to `components/schemas` instead.
 */
export class JsonSchemaConverter {
  /** What becomes the document's `components/schemas`. */
  readonly components: Record<string, JsonSchema> = {};

  constructor(private readonly onUnrepresentable?: UnrepresentableListener) {}

  /**
   * `where` names the schema (`tasks_create_input`); it prefixes the components of recursive parts, which
   * zod names only by a counter.
   */
  convert(schema: z.ZodType, io: 'input' | 'output', where: string): JsonSchema {
    const converted = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: ({ path, message }) => {
        this.onUnrepresentable?.(path.length > 0 ? `${where}.${path.join('.')}` : where, message);
        return 'any';
      },
    }) as JsonSchema;
    const { $schema: _dialect, $defs: defs, ...root } = liftNullableDescriptions(converted) as JsonSchema;
    if (!defs) return root;

    const names = new Map<string, string>();
    for (const name of Object.keys(defs as object)) {
      // zod counts the schemas it had to name itself; an id given with .meta() is the author's.
      names.set(name, name.startsWith('__schema') ? `${where}_${name.replace(/^_+/, '')}` : io === 'output' ? name : `${name}_input`);
    }
    const relink = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(relink);
      if (value === null || typeof value !== 'object') return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, inner]) => {
          const local = key === '$ref' && typeof inner === 'string' ? /^#\/\$defs\/(.+)$/.exec(inner) : null;
          return [key, local ? `#/components/schemas/${names.get(local[1]!) ?? local[1]}` : relink(inner)];
        }),
      );
    };
    for (const [name, definition] of Object.entries(defs as Record<string, unknown>)) {
      this.addComponent(names.get(name)!, relink(definition) as JsonSchema);
    }
    return relink(root) as JsonSchema;
  }

  private addComponent(name: string, schema: JsonSchema): void {
    const existing = this.components[name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(schema)) {
      throw new Error(`Two different schemas share the id "${name}"; give each its own id in .meta()`);
    }
    this.components[name] = schema;
  }
}

/**
 * `.describe(…).nullable()` leaves the description on the non-null branch of an `anyOf`, where a reader of
 * the field (and Swagger UI) does not look; it belongs to the field.
 */
function liftNullableDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(liftNullableDescriptions);
  if (value === null || typeof value !== 'object') return value;
  const node = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, liftNullableDescriptions(inner)])) as JsonSchema;
  const branches = node.anyOf as JsonSchema[] | undefined;
  if (node.description === undefined && branches?.length === 2 && branches.some((branch) => branch.type === 'null')) {
    const described = branches.find((branch) => branch.type !== 'null' && typeof branch.description === 'string');
    if (described) {
      const { description, ...rest } = described;
      return { ...node, anyOf: branches.map((branch) => (branch === described ? rest : branch)), description };
    }
  }
  return node;
}
