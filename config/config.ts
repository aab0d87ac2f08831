import { z } from 'zod';

export const TIERS = ['minuet', 'allegro', 'forte'] as const;
export type Tier = (typeof TIERS)[number];

const DEFAULT_MODELS: Record<string, Record<Tier, string>> = {
  anthropic: { minuet: 'claude-haiku-5-5', allegro: 'claude-sonnet-5-5', forte: 'claude-opus-5-5' },
  openai: { minuet: 'gpt-4.1-mini', allegro: 'gpt-4.1', forte: 'o3' },
  'openai-compatible': { minuet: 'small', allegro: 'medium', forte: 'large' },
};

const optionalString = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s))
  .optional();
const int = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);

const schema = z.object({
  PORT: int(8080, 0, 65535),
  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATA_DIR: z.string().default('.data'),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('skill-missions'),
  TEMPORAL_DEV_PORT: int(7233, 1, 65535),
  TEMPORAL_UI_PORT: int(8233, 1, 65535),
  MODEL_PROVIDER: z.enum(['anthropic', 'openai', 'openai-compatible']).default('anthropic'),
  MODEL_BASE_URL: optionalString.pipe(z.url().optional()),
  MODEL_API_KEY: optionalString,
  MODEL_TIER_MINUET: optionalString,
  MODEL_TIER_ALLEGRO: optionalString,
  MODEL_TIER_FORTE: optionalString,
  MODEL_CONCURRENCY: int(2, 1, 256),
  MODEL_MAX_TOKENS: int(4096, 1, 200_000),
  MAX_TURNS_CAP: int(25, 1, 200),
  APPS_DIR: z.string().default('./apps'),
  CADENZA_ADMIN_KEY: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  SHUTDOWN_GRACE_SECONDS: int(10, 0, 600),
  BODY_LIMIT_KB: int(256, 1, 65536),
});

/** The process configuration, parsed once from the environment and frozen. */
export type Config = Readonly<{
  port: number;
  databaseUrl: string | undefined;
  dataDir: string;
  temporal: Readonly<{
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    modelTaskQueue: string;
    devPort: number;
    uiPort: number;
  }>;
  model: Readonly<{
    provider: 'anthropic' | 'openai' | 'openai-compatible';
    baseUrl: string | undefined;
    apiKey: string | undefined;
    tiers: Readonly<Record<Tier, string>>;
    concurrency: number;
    maxTokens: number;
  }>;
  maxTurnsCap: number;
  appsDir: string;
  adminKey: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  shutdownGraceSeconds: number;
  bodyLimitBytes: number;
}>;

/** Thrown when the environment is invalid; the message names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses and validates the environment once; fails fast naming each invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const defaults = DEFAULT_MODELS[e.MODEL_PROVIDER]!;
  return deepFreeze({
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      modelTaskQueue: `${e.TEMPORAL_TASK_QUEUE}-model`,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
    },
    model: {
      provider: e.MODEL_PROVIDER,
      baseUrl: e.MODEL_BASE_URL,
      apiKey: e.MODEL_API_KEY,
      tiers: {
        minuet: e.MODEL_TIER_MINUET ?? defaults.minuet,
        allegro: e.MODEL_TIER_ALLEGRO ?? defaults.allegro,
        forte: e.MODEL_TIER_FORTE ?? defaults.forte,
      },
      concurrency: e.MODEL_CONCURRENCY,
      maxTokens: e.MODEL_MAX_TOKENS,
    },
    maxTurnsCap: e.MAX_TURNS_CAP,
    appsDir: e.APPS_DIR,
    adminKey: e.CADENZA_ADMIN_KEY,
    logLevel: e.LOG_LEVEL,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    bodyLimitBytes: e.BODY_LIMIT_KB * 1024,
  });
}

/** The variable names the configuration reads (kept in step with `.env.example` by a test). */
export const CONFIG_KEYS = Object.keys(schema.shape);

function deepFreeze<T>(o: T): T {
  for (const v of Object.values(o as object)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
}
