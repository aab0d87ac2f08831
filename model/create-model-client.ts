import { createAnthropicClient } from './anthropic-client.ts';
import { createOpenAIClient } from './openai-client.ts';
import type { ModelProvider } from '../contracts/model.ts';
import type { ModelClient } from './model-types.ts';

/** Which provider to talk to; `baseUrl` is the SDK base (Anthropic: host root, OpenAI: up to `/v1`). */
export type ModelClientConfig = {
  provider: ModelProvider;
  baseUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
  /** Anthropic's cache breakpoints (MODEL_PROMPT_CACHING; on unless false). OpenAI caches without being asked. */
  promptCaching?: boolean;
};

// Local OpenAI-compatible servers often need no key, but both SDKs refuse to start without one.
const PLACEHOLDER_KEY = 'unused';

/** The ModelClient for a configured provider. */
export function createModelClient(config: ModelClientConfig): ModelClient {
  const apiKey = config.apiKey || PLACEHOLDER_KEY;
  switch (config.provider) {
    case 'anthropic':
      return createAnthropicClient({ baseUrl: config.baseUrl, apiKey, timeoutMs: config.timeoutMs, promptCaching: config.promptCaching });
    case 'openai':
      return createOpenAIClient({ baseUrl: config.baseUrl, apiKey, timeoutMs: config.timeoutMs });
    case 'openai-compatible':
      if (!config.baseUrl) throw new Error('provider openai-compatible needs a baseUrl');
      // Compatible servers (vLLM, Ollama, llama.cpp) widely accept max_tokens but not always max_completion_tokens.
      return createOpenAIClient({ baseUrl: config.baseUrl, apiKey, timeoutMs: config.timeoutMs, maxTokensField: 'max_tokens' });
    default: {
      const unknown: never = config.provider;
      throw new Error(`unknown model provider ${String(unknown)}`);
    }
  }
}
