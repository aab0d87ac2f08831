import { isGrpcServiceError, type ConnectionLike } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_NAMES } from '../contracts/mission.ts';
import type { Logger } from '../lib/logger.ts';

const KEYWORD = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const GRPC_INVALID_ARGUMENT = 3;

/** The namespace lacks some of Cadenza's search attributes and this connection may not register them. */
export class SearchAttributesMissing extends Error {
  readonly missing: string[];
  constructor(namespace: string, missing: string[], why: string) {
    super(
      `Temporal namespace ${namespace} lacks Cadenza's search attributes ${missing.join(', ')} and they could not be registered ` +
        `(${why}); register them once with: ${registerCommands(namespace, missing)}`,
    );
    this.name = 'SearchAttributesMissing';
    this.missing = missing;
  }
}

/**
 * Makes sure the namespace has Cadenza's search attributes (every workflow start sets them): lists them, and registers
 * those missing through the operator service, as the compose file's one-shot service does. Throws
 * SearchAttributesMissing, naming the command, when the server refuses (Temporal Cloud registers them in its own
 * console); a Temporal that cannot be reached throws its own error, for the caller to treat as unavailable.
 */
export async function ensureSearchAttributes(connection: ConnectionLike, namespace: string, logger: Logger): Promise<void> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (missing.length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
    });
  } catch (err) {
    if (!isGrpcServiceError(err)) throw err;
    throw new SearchAttributesMissing(namespace, missing, err.details || err.message);
  }
  logger.info('registered the search attributes the namespace lacked', { namespace, registered: missing });
}

/** The operator's commands that register `missing` on `namespace` (Temporal Cloud: its console or `tcld`). */
export const registerCommands = (namespace: string, missing: string[]): string =>
  missing.map((name) => `temporal operator search-attribute create --namespace ${namespace} --name ${name} --type Keyword`).join(' && ');

/** Cadenza's search attributes the namespace lacks (none once registered). */
export async function missingSearchAttributes(connection: ConnectionLike, namespace: string): Promise<string[]> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set([...Object.keys(listed.customAttributes ?? {}), ...Object.keys(listed.systemAttributes ?? {})]);
  return SEARCH_ATTRIBUTE_NAMES.filter((name) => !known.has(name));
}

/** A workflow start the server refused because the namespace has no mapping for one of its search attributes. */
export function isMissingSearchAttribute(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && e.code === GRPC_INVALID_ARGUMENT && /search attribute/i.test(e.details || e.message)) return true;
  }
  return false;
}
