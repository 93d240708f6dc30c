/**
 * Registers the platform's search attributes that a namespace lacks, at worker start: a Temporal
 * server set up by an older version (an existing dev-server database, a cluster whose
 * create-namespace job ran before an attribute was added) would otherwise fail the workflow task
 * that upserts the new attribute, on every retry. Best effort: a server that refuses (Temporal
 * Cloud has no operator service) is logged, and the operator registers them (README, Temporal).
 */
import { temporal } from '@temporalio/proto';
import type { NativeConnection } from '@temporalio/worker';
import { SearchAttributeType } from '@temporalio/common';
import { CALL_SEARCH_ATTRIBUTES } from '../shared/search-attributes';
import type { Logger } from '../shared/logger';

const INDEXED: Partial<Record<SearchAttributeType, temporal.api.enums.v1.IndexedValueType>> = {
  [SearchAttributeType.KEYWORD]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.BOOL]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
};

export async function ensureSearchAttributes(connection: NativeConnection, namespace: string, log: Logger): Promise<void> {
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = CALL_SEARCH_ATTRIBUTES.filter((key) => !(key.name in (customAttributes ?? {})));
    if (!missing.length) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED[key.type]!])),
    });
    log.info('registered missing search attributes', { namespace, attributes: missing.map((k) => k.name) });
  } catch (err) {
    log.warn('could not check the search attributes; register them with temporal-config/create-namespace.sh', { namespace, error: (err as Error).message });
  }
}
