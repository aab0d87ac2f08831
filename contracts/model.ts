/** The model vocabulary shared by config, skills, the model adapters and the workflow: no imports, no I/O. */

/** The model tiers a skill may ask for; config maps each to a model id. */
export const TIERS = ['minuet', 'allegro', 'forte'] as const;
export type Tier = (typeof TIERS)[number];
/** The tier of a skill that names none. */
export const DEFAULT_TIER: Tier = 'allegro';

/** The providers whose protocols the model adapters speak. */
export const MODEL_PROVIDERS = ['anthropic', 'openai', 'openai-compatible'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** Why a model reply ended, in the Anthropic vocabulary (adapters translate others). */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';

/** One model a tier's call can go to: the provider whose protocol it speaks and the model id. */
export type ModelTarget = { provider: ModelProvider; model: string };
/** A target as configured and reported: `provider:model`. */
export const targetLabel = (t: ModelTarget): string => `${t.provider}:${t.model}`;

/**
 * The failures that move a call on to the tier's next target once its retries are spent: the provider overloaded or
 * throttling (429, 529), failing (5xx) or unreachable. A 4xx about the request itself would fail the same anywhere.
 */
export const FALLBACK_REASONS = ['rate_limited', 'server_error', 'network'] as const;
export type FallbackReason = (typeof FALLBACK_REASONS)[number];

/** The details of a failed model call: the target that failed and the tier's next one, when the chain has one. */
export type ModelFailureDetails = { target: string; next?: string };
