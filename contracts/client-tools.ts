import { defineUpdate } from '@temporalio/workflow';

/** Tools the caller runs (`runs: client` in app.yml): the mission waits, durably, for the result sent to its API. */

/** What the caller sends: the tool's output, or an error the model reads instead. */
export type ClientToolResult = { output: unknown } | { error: string };
/** An accepted result: the call ends with it (its `tool_end` follows on the event log). */
export type ClientToolReply = { toolUseId: string; status: 'completed' | 'error' };
/** Why a result is refused: the call is known but waits for no result (answered, past its deadline, not a client tool). */
export const CLIENT_CALL_NOT_WAITING = 'ClientCallNotWaiting';
/**
 * Completes a waiting client tool call. The validator refuses an unknown call (TOOL_CALL_NOT_FOUND) or one that waits
 * for no result (CLIENT_CALL_NOT_WAITING) atomically, writing no history; the API checks the output's schema before.
 */
export const toolResultUpdate = defineUpdate<ClientToolReply, [toolUseId: string, result: ClientToolResult]>('toolResult');
