import type { ChatMessage, ModelClient, ModelResponse } from '../model/model-types.ts';

/** The baseline's activities: the same model client and HTTP tools a mission uses, with the conversation as input. */
export function createBaselineActivities(opts: { modelClient: ModelClient; model: string; toolsUrl: string; tools: string[] }) {
  return {
    async callModel(messages: ChatMessage[]): Promise<Pick<ModelResponse, 'stopReason' | 'content'>> {
      const { stopReason, content } = await opts.modelClient.complete({
        model: opts.model,
        system: 'Use the tools to answer the objective.',
        messages,
        tools: opts.tools.map((name) => ({ name, description: 'Looks a term up.', inputSchema: { type: 'object' } })),
        maxTokens: 1024,
      });
      return { stopReason, content };
    },
    /** POSTs the input to the lab tool server, as Cadenza's HTTP executor does; the body text is the result. */
    async runTool(name: string, input: Record<string, unknown>): Promise<string> {
      const tool = name.split('__').at(-1)!;
      const res = await fetch(`${opts.toolsUrl}/${tool}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
      });
      return res.text();
    },
  };
}

export type BaselineActivities = ReturnType<typeof createBaselineActivities>;
