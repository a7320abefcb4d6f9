import { shown } from './record-diff';

// How a changeset's item shows a record made by an earlier item of the same changeset: by the item and its ref
// ("project made by item 1 (proj)"), not by the id it is only proposed under until the changeset is applied. Shared
// by the review card and a decision link's page.

/** A record of an earlier item that an item's input names as "$ref:<ref>" (the review's changeset item `references`). */
export interface ItemReference {
  field: string;
  ref: string;
  /** The earlier item's index, from 0. */
  item: number;
  resource_type: string;
}

const refPrefix = '$ref:';

/** "Project" → "project", "TeamMember" → "team member". */
const typeWords = (resourceType: string) => resourceType.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

/** How a person reads a reference: the record's type, the item that makes it (counted from 1, as the card does) and its ref. */
export function referenceLabel(reference: ItemReference): string {
  return `${typeWords(reference.resource_type)} made by item ${reference.item + 1} (${reference.ref})`;
}

/**
 * The fields of an item's record that hold a reference, each as a person reads it: the input's value with every
 * "$ref:<ref>" put in words (a list keeps its other entries).
 */
export function referencedFields(input: Record<string, unknown>, references: readonly ItemReference[]): Record<string, string> {
  const byRef = new Map(references.map((reference) => [reference.ref, referenceLabel(reference)]));
  const inWords = (value: unknown): unknown => {
    if (typeof value === 'string') return value.startsWith(refPrefix) ? (byRef.get(value.slice(refPrefix.length)) ?? value) : value;
    if (Array.isArray(value)) return value.map(inWords);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, inWords(entry)]));
    return value;
  };
  const fields = new Set(references.map((reference) => reference.field.split('.')[0]!));
  return Object.fromEntries([...fields].map((field) => [field, shown(inWords(input[field]))]));
}
