import type { ChatMessage, ModelClient } from '../model/model-types.ts';
import { executeHttpTool } from '../tools/http-executor.ts';
import type { HttpToolDefinition } from '../tools/app-definition.ts';

/** Trivial activities for the bare workflow: no I/O, tiny payloads. */
export const bareActivities = {
  async prepare(turns: number): Promise<{ turns: number }> {
    return { turns };
  },
  async model(turn: number): Promise<{ stopReason: string; turn: number }> {
    return { stopReason: 'tool_use', turn };
  },
  async tool(turn: number): Promise<{ status: string; turn: number }> {
    return { status: 'completed', turn };
  },
  async complete(_turns: number): Promise<void> {},
};

export type BareActivities = typeof bareActivities;

/**
 * The bare activities making the mission's two outside calls and nothing else: the model activity sends the same
 * model client a conversation of the mission's shape (objective, then a tool use and its result per earlier turn),
 * streamed as a mission's is; the tool activity calls the same HTTP tool through the same executor. No Postgres, no
 * feed, no events: a mission's time over this one's is what Cadenza adds to calling the same model and tool.
 */
export function callingActivities(opts: {
  model: ModelClient;
  modelId: string;
  tool: HttpToolDefinition;
  env: Record<string, string>;
}): BareActivities {
  const toolUseId = (turn: number) => `toolu_bare_${turn}`;
  const conversation = (turn: number): ChatMessage[] => {
    const messages: ChatMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'bare objective' }] }];
    for (let t = 1; t < turn; t++) {
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: toolUseId(t), name: 'lab__lookup', input: { q: 'x' } }] });
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId(t), content: '{"ok":true}' }] });
    }
    return messages;
  };
  return {
    ...bareActivities,
    async model(turn) {
      const reply = await opts.model.complete({
        model: opts.modelId,
        system: 'You are a bare workflow.',
        messages: conversation(turn),
        tools: [{ name: 'lab__lookup', description: opts.tool.description, inputSchema: opts.tool.inputSchema }],
        maxTokens: 1024,
        onText: () => {},
      });
      return { stopReason: reply.stopReason, turn };
    },
    async tool(turn) {
      const reply = await executeHttpTool(opts.tool, { q: 'x' }, { env: opts.env, idempotencyKey: `bare/${toolUseId(turn)}` });
      if (!reply.ok) throw new Error(`bare tool call failed: ${reply.error}`);
      return { status: 'completed', turn };
    },
  };
}
