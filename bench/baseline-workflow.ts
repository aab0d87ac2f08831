import { proxyActivities } from '@temporalio/workflow';
import type { ChatMessage, ContentBlock } from '../model/model-types.ts';
import type { BaselineActivities } from './baseline-activities.ts';

/** Input of the baseline: the objective, a turn bound, and the queue its model activities run on. */
export type BaselineInput = { objective: string; maxTurns: number; modelTaskQueue: string };

const { runTool } = proxyActivities<BaselineActivities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 3 } });

/**
 * What a user would build with an AI SDK integration for Temporal: the conversation lives in workflow state, every
 * model activity receives all of it and every tool result comes back through history. Same model server, same tools.
 */
export async function baselineWorkflow(input: BaselineInput): Promise<number> {
  const { callModel } = proxyActivities<BaselineActivities>({
    taskQueue: input.modelTaskQueue,
    startToCloseTimeout: '60s',
    retry: { maximumAttempts: 3 },
  });
  const messages: ChatMessage[] = [{ role: 'user', content: [{ type: 'text', text: input.objective }] }];
  for (let turn = 1; turn <= input.maxTurns; turn++) {
    const reply = await callModel(messages);
    messages.push({ role: 'assistant', content: reply.content });
    const uses = reply.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    if (reply.stopReason !== 'tool_use' || uses.length === 0) return turn;
    const outputs = await Promise.all(uses.map((u) => runTool(u.name, u.input)));
    messages.push({
      role: 'user',
      content: uses.map((u, i): ContentBlock => ({ type: 'tool_result', tool_use_id: u.id, content: outputs[i]! })),
    });
  }
  return input.maxTurns;
}
