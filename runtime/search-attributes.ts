import protos from '@temporalio/proto';
import type { NativeConnection } from '@temporalio/worker';
import { searchAttributes } from '../workflows/messages';

const { IndexedValueType } = protos.temporal.api.enums.v1;

/** The names of Gatehouse's search attributes, all keywords. */
export const searchAttributeNames = Object.values(searchAttributes).map((key) => key.name);

/** `temporal server start-dev` flags that register them when the dev server starts. */
export function devServerSearchAttributeFlags(): string[] {
  return searchAttributeNames.flatMap((name) => ['--search-attribute', `${name}=Keyword`]);
}

export class SearchAttributesMissing extends Error {}

/**
 * Registers Gatehouse's search attributes in the namespace where they are missing (an operator's call: a
 * self-hosted cluster or the dev server allows it; Temporal Cloud registers them with tcld or in its UI).
 * Answers the names it added. One with the name and another type is an error: it is left for a person.
 */
export async function ensureSearchAttributes(connection: Pick<NativeConnection, 'operatorService'>, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const present = customAttributes ?? {};
  const clashing = searchAttributeNames.filter((name) => name in present && present[name] !== IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
  if (clashing.length > 0) {
    throw new SearchAttributesMissing(`search attributes ${clashing.join(', ')} exist in namespace ${namespace} with a type other than Keyword`);
  }
  const missing = searchAttributeNames.filter((name) => !(name in present));
  if (missing.length === 0) return [];
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });
  } catch (error) {
    throw new SearchAttributesMissing(
      `search attributes ${missing.join(', ')} are missing in namespace ${namespace} and could not be added (${(error as Error).message.split('\n')[0]}): ` +
        'run `gatehouse temporal setup` with an operator\'s access, or add them as Keyword attributes in Temporal Cloud (tcld or the UI)',
      { cause: error },
    );
  }
  return missing;
}
