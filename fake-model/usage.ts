import type { ModelUsage } from '../model/model-types.ts';
import type { FakeReply, RecordedRequest } from './fake-model-types.ts';

/** The reply's usage, or a rough estimate from the request and reply sizes, with what the prompt cache did. */
export function usageOf(request: RecordedRequest, reply: FakeReply): ModelUsage {
  if (reply.usage) return reply.usage;
  const inputTokens = Math.max(1, Math.ceil(JSON.stringify(request.body ?? '').length / 4));
  const read = Math.min(request.cache?.readTokens ?? 0, inputTokens);
  const written = Math.min(request.cache?.creationTokens ?? 0, inputTokens - read);
  return {
    inputTokens,
    outputTokens: Math.max(1, Math.ceil(((reply.text ?? '').length + JSON.stringify(reply.toolUses ?? []).length) / 4)),
    ...(read ? { cacheReadTokens: read } : {}),
    ...(written ? { cacheCreationTokens: written } : {}),
  };
}

/** Anthropic's usage: `input_tokens` is what the cache neither read nor wrote. */
export function anthropicUsage(u: ModelUsage, outputTokens = u.outputTokens) {
  const read = u.cacheReadTokens ?? 0;
  const written = u.cacheCreationTokens ?? 0;
  return {
    input_tokens: Math.max(0, u.inputTokens - read - written),
    output_tokens: outputTokens,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: written,
  };
}

/** OpenAI's usage: `prompt_tokens` is the whole prompt, the cached part in its details. */
export function openaiUsage(u: ModelUsage) {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cacheReadTokens ?? 0 },
  };
}
