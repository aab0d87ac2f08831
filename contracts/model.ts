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
