import { loadClientConfigProfile, type ClientConfigProfile } from '@temporalio/envconfig';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { DEFAULT_MAX_DELEGATION_DEPTH } from '../contracts/delegation.ts';
import { MAX_TURNS_CEILING } from '../contracts/limits.ts';
import { DEFAULT_MAX_QUEUED_MESSAGES, DEFAULT_SESSION_HISTORY_EVENTS } from '../contracts/messages.ts';
import { MODEL_PROVIDERS, TIERS, type ModelProvider, type Tier } from '../contracts/model.ts';
import { join } from 'node:path';
import { cadenzaCache, sentenceEncoderInstalled } from './cache-dir.ts';
import { decodeMasterKey } from './master-key-format.ts';
import { fallbackList, fallbackProblems, type ModelEndpoint } from './model-fallbacks.ts';
import { providerLimitProblems, providerLimitsVariable } from './provider-limits.ts';

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
/**
 * Discovery's defaults per encoder: the share of meaning (cosine) in a skill's score and the lowest score that loads.
 * The sentence encoder's pair was calibrated on the tuning asks (`npm run bench:discovery -- --sweep`): the lowest
 * minimum with no false load. An endpoint keeps the weight it always had (no endpoint here to calibrate it on); word
 * vectors made discovery worse, so they get none and discovery stays lexical.
 */
/** The task queues a worker process may serve (WORKER_QUEUES): the missions', the model calls', the tool calls'. */
export const WORKER_QUEUE_NAMES = ['missions', 'model', 'tools'] as const;

const DISCOVERY_DEFAULTS = {
  endpoint: { embeddingWeight: 0.5, minScore: 0.15 },
  'sentence-encoder': { embeddingWeight: 0.3, minScore: 0.19 },
  'word-vectors': { embeddingWeight: 0, minScore: 0.15 },
} as const;
const fraction = (def: number) => z.coerce.number().min(0).max(1).default(def);

const priceSchema = z.record(
  z.string().min(1),
  z
    .object({
      inputPerMTok: z.number().min(0),
      outputPerMTok: z.number().min(0),
      cacheReadPerMTok: z.number().min(0).optional(),
      cacheWritePerMTok: z.number().min(0).optional(),
    })
    .strict(),
);
/**
 * MODEL_PRICES: JSON `{"<model id>": {"inputPerMTok": 3, "outputPerMTok": 15, "cacheReadPerMTok": 0.3,
 * "cacheWritePerMTok": 3.75}}` (USD per million tokens; a cache rate left out is the input rate).
 */
const prices = optionalString.transform((s, ctx) => {
  if (s === undefined) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(s);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON {"<model id>": {"inputPerMTok": n, "outputPerMTok": n}}' });
    return z.NEVER;
  }
  const parsed = priceSchema.safeParse(raw);
  if (!parsed.success) {
    ctx.addIssue({
      code: 'custom',
      message: `must map model ids to {inputPerMTok, outputPerMTok} numbers ≥ 0 (${parsed.error.issues[0]?.message})`,
    });
    return z.NEVER;
  }
  return parsed.data;
});
/** SECRETS_MASTER_KEY: one or more 32-byte keys, comma-separated; the first seals, all of them open (rotation). */
const masterKeys = optionalString.transform((s, ctx) => {
  const keys = (s ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  keys.forEach((k, i) => {
    // The message never quotes the value: it is a secret.
    if (!decodeMasterKey(k)) ctx.addIssue({ code: 'custom', message: `entry ${i + 1} is not a 32-byte key (64 hex digits or base64)` });
  });
  return keys;
});

/** WEBHOOK_ALLOW_PRIVATE_NETWORKS: addresses and CIDR ranges, comma-separated, each checked here. */
const networkList = optionalString.transform((s, ctx) => {
  const entries = (s ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const max = family === 4 ? 32 : 128;
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (family === 0 || !prefixOk || extra !== undefined)
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not an IP address or CIDR range (127.0.0.1, 10.0.0.0/8, ::1)` });
  }
  return entries;
});

const optionalNumber = (schema: z.ZodNumber) =>
  optionalString.transform((s) => (s === undefined ? undefined : Number(s))).pipe(schema.optional());

// Loose: the variables it does not name (PROVIDER_KEY_*, TEMPORAL_GRPC_META_*, the cache's) pass through raw to `toConfig`.
const envSchema = z.looseObject({
  PORT: int(8080, 0, 65535),
  WORKER_METRICS_PORT: z
    .string()
    .trim()
    .default('9464')
    .pipe(
      z.union([z.literal('off'), z.string().regex(/^\d+$/, 'a port number or off').transform(Number).pipe(z.number().int().max(65535))]),
    ),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional()),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('cadenza'),
  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATA_DIR: z.string().default('.data'),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: optionalString,
  TEMPORAL_API_KEY: optionalString,
  TEMPORAL_TLS: optionalString.pipe(z.enum(['true', 'false', '1', '0']).optional()),
  TEMPORAL_TLS_CLIENT_CERT_PATH: optionalString,
  TEMPORAL_TLS_CLIENT_KEY_PATH: optionalString,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: optionalString,
  TEMPORAL_TLS_SERVER_NAME: optionalString,
  TEMPORAL_CONFIG_FILE: optionalString,
  TEMPORAL_PROFILE: optionalString,
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('skill-missions'),
  TEMPORAL_DEV_PORT: int(7233, 1, 65535),
  TEMPORAL_UI_PORT: int(8233, 1, 65535),
  TEMPORAL_UI_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  TEMPORAL_WORKER_DEPLOYMENT: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, "-" and "_" only (Temporal joins it to the build id with a ".")')
      .optional(),
  ),
  TEMPORAL_WORKER_BUILD_ID: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, ".", "-" and "_" only')
      .optional(),
  ),
  TEMPORAL_WORKER_PROMOTE: z.enum(['first', 'always', 'never']).default('first'),
  MODEL_PROVIDER: z.enum(MODEL_PROVIDERS).default('anthropic'),
  MODEL_BASE_URL: optionalString.pipe(z.url().optional()),
  MODEL_API_KEY: optionalString,
  MODEL_TIER_MINUET: optionalString,
  MODEL_TIER_ALLEGRO: optionalString,
  MODEL_TIER_FORTE: optionalString,
  MODEL_TIER_MINUET_FALLBACKS: fallbackList,
  MODEL_TIER_ALLEGRO_FALLBACKS: fallbackList,
  MODEL_TIER_FORTE_FALLBACKS: fallbackList,
  MODEL_ANTHROPIC_BASE_URL: optionalString.pipe(z.url().optional()),
  MODEL_ANTHROPIC_API_KEY: optionalString,
  MODEL_OPENAI_BASE_URL: optionalString.pipe(z.url().optional()),
  MODEL_OPENAI_API_KEY: optionalString,
  MODEL_OPENAI_COMPATIBLE_BASE_URL: optionalString.pipe(z.url().optional()),
  MODEL_OPENAI_COMPATIBLE_API_KEY: optionalString,
  MODEL_CONCURRENCY: int(2, 1, 256),
  PROVIDER_LIMITS: providerLimitsVariable,
  MODEL_PROMPT_CACHING: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('true')
    .transform((v) => v === 'true'),
  TOOL_CONCURRENCY: int(2000, 1, 100_000),
  WORKFLOW_CACHE_SIZE: int(1000, 0, 100_000),
  WORKER_QUEUES: z
    .string()
    .default('missions,model,tools')
    .transform((v) => v.split(',').map((q) => q.trim()))
    .pipe(z.array(z.enum(WORKER_QUEUE_NAMES), { message: 'must be a comma list of missions, model, tools' }).min(1)),
  MAX_RUNNING_MISSIONS_PER_USER: optionalNumber(z.number().int().min(1)),
  MAX_RUNNING_MISSIONS_PER_TENANT: optionalNumber(z.number().int().min(1)),
  MAX_STARTS_PER_MINUTE_PER_USER: optionalNumber(z.number().int().min(1)),
  START_SETTLE_SECONDS: int(30, 2, 3600),
  MODEL_MAX_TOKENS: int(4096, 1, 200_000),
  MAX_TURNS_CAP: int(25, 1, MAX_TURNS_CEILING),
  MAX_DELEGATION_DEPTH: int(DEFAULT_MAX_DELEGATION_DEPTH, 0, 10),
  APPS_DIR: z.string().default('./apps'),
  CADENZA_ADMIN_KEY: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  HTTP_REQUEST_TIMEOUT_SECONDS: int(30, 1, 3600),
  HTTP_HEADERS_TIMEOUT_SECONDS: int(10, 1, 600),
  SHUTDOWN_GRACE_SECONDS: int(10, 0, 600),
  DATABASE_OUTAGE_WAIT_SECONDS: int(300, 0, 86_400),
  BODY_LIMIT_KB: int(256, 1, 65536),
  SKILL_BUNDLE_MAX_FILES: int(200, 1, 10_000),
  SKILL_BUNDLE_MAX_FILE_KB: int(1024, 1, 1_048_576),
  SKILL_BUNDLE_MAX_TOTAL_KB: int(10_240, 1, 1_048_576),
  SKILL_BUNDLE_MAX_RATIO: int(100, 2, 100_000),
  SKILL_GIT_LOCAL_URLS: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  SKILL_GIT_TIMEOUT_S: int(60, 1, 600),
  SKILL_GIT_MAX_KB: int(51_200, 1, 4_194_304),
  DISCOVERY_MIN_SCORE: optionalNumber(z.number().min(0).max(1)),
  DISCOVERY_MARGIN: fraction(0.05),
  DISCOVERY_EMBEDDING_WEIGHT: optionalNumber(z.number().min(0).max(1)),
  MODEL_PRICES: prices,
  DEFAULT_MAX_TOKENS: optionalNumber(z.number().int().min(1)),
  DEFAULT_MAX_COST_USD: optionalNumber(z.number().positive()),
  EMBEDDINGS_BASE_URL: optionalString.pipe(z.url().optional()),
  EMBEDDINGS_API_KEY: optionalString,
  EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  SENTENCE_ENCODER_DIR: optionalString,
  DISCOVERY_MIN_COSINE: optionalNumber(z.number().min(0).max(0.95)),
  SECRETS_MASTER_KEY: masterKeys,
  SECRETS_BACKEND: z.enum(['postgres', 'vault']).default('postgres'),
  VAULT_ADDR: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  VAULT_TOKEN: optionalString,
  VAULT_KV_MOUNT: z.string().trim().min(1).default('secret'),
  VAULT_PATH_PREFIX: z.string().trim().min(1).default('cadenza'),
  MAX_TOOLS_PER_MISSION: int(24, 1, 256),
  MISSION_FILE_MAX_BYTES: int(10 * 1024 * 1024, 1, 1024 * 1024 * 1024),
  MISSION_FILE_MAX_COUNT: int(20, 0, 10_000),
  MISSION_FILE_TOTAL_BYTES: int(50 * 1024 * 1024, 1, 16 * 1024 * 1024 * 1024),
  APPROVAL_TIMEOUT_S: int(600, 1, 604_800),
  BUDGET_PAUSE_TIMEOUT_S: int(604_800, 1, 31_536_000),
  MAX_QUEUED_MESSAGES: int(DEFAULT_MAX_QUEUED_MESSAGES, 1, 1000),
  SESSION_IDLE_TTL_S: int(86_400, 1, 31_536_000),
  SESSION_HISTORY_EVENTS: int(DEFAULT_SESSION_HISTORY_EVENTS, 1, 50_000),
  CONTEXT_COMPACT_AT_TOKENS: int(150_000, 0, 10_000_000),
  CONTEXT_KEEP_TURNS: int(4, 1, 100),
  WEBHOOK_RETRY_HOURS: z.coerce.number().positive().max(720).default(24),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: networkList,
  EVAL_GRADER_TIER: z.enum(TIERS).default('minuet'),
  SKILL_ACTIVATION_REQUIRES_EVAL: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  EVAL_MAX_REGRESSION: z.coerce.number().min(0).max(1).default(0),
  SCRIPT_TIMEOUT_S: int(30, 1, 600),
  SCRIPT_CPU_S: int(30, 1, 3600),
  SCRIPT_MEMORY_MB: int(2048, 256, 65_536),
  SCRIPT_MEMORY_TOTAL_MB: int(6144, 256, 1_048_576),
  SCRIPT_REQUIRE_SECCOMP: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  SCRIPT_MAX_PROCESSES: int(64, 8, 4096),
  SCRIPT_MAX_OPEN_FILES: int(128, 32, 65_536),
  SCRIPT_MAX_OUTPUT_KB: int(1024, 1, 65_536),
  SCRIPT_TMPFS_MB: int(64, 1, 4096),
  SCRIPT_MAX_TOOL_CALLS: int(20, 0, 1000),
  SCRIPT_TOOL_ALLOWLIST: z
    .string()
    .default('search_memory')
    .transform((s) => s.split(/[\s,]+/).filter((n) => n !== ''))
    .pipe(z.array(z.string().regex(/^[a-z0-9_]{1,48}$/, 'must list system tool names (a-z, 0-9, _), space- or comma-separated'))),
  SCRIPT_PYTHON: z.string().min(1).default('python3'),
  SCRIPT_NODE: optionalString,
  FACTORY_MAX_ATTEMPTS: int(10, 1, 50),
});

/** `PROVIDER_KEY_<ID>`: the server-wide key of a provider, the last step of the secret lookup. */
const PROVIDER_KEY = /^PROVIDER_KEY_([A-Z0-9]+(?:_[A-Z0-9]+)*)$/;

/** The process configuration, parsed once from the environment (`loadConfig`) and frozen. */
export type Config = z.output<typeof configSchema>;
/** How skill scripts run (see skill-scripts/): every limit of the sandbox and the callback allowlist. */
export type ScriptSettings = Config['scripts'];

/**
 * Why no mission can reach the model, or undefined when it can: the provider's own endpoint (no MODEL_BASE_URL) needs
 * MODEL_API_KEY. A MODEL_BASE_URL (a proxy, Ollama, vLLM, the fake model) may need no key, so it is taken as it is.
 */
export function modelUnconfigured(model: Pick<Config['model'], 'provider' | 'apiKey' | 'baseUrl'>): string | undefined {
  if (model.apiKey || model.baseUrl) return undefined;
  return (
    `MODEL_API_KEY is not set, and ${model.provider}'s own endpoint needs one: set MODEL_API_KEY, or MODEL_BASE_URL for ` +
    'an endpoint that needs no key (Ollama, a local server), or start with --demo for the built-in fake model'
  );
}

/** The price of a model, in USD per million tokens. */
export type ModelPrice = { inputPerMTok: number; outputPerMTok: number; cacheReadPerMTok?: number; cacheWritePerMTok?: number };

/** Thrown when the environment is invalid; the message names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The OTLP/HTTP traces URL of a base endpoint, as the OpenTelemetry spec builds it: the base plus `v1/traces`. */
function otlpTracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** Parses and validates the environment once; fails fast naming each invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** The configuration of a parsed environment; a rule across variables throws its `ConfigError` (zod lets it through). */
function toConfig(e: z.output<typeof envSchema>) {
  // The keys the schema does not name are the environment's raw strings.
  const env = e as unknown as Record<string, string | undefined>;
  if (e.SCRIPT_MEMORY_TOTAL_MB < e.SCRIPT_MEMORY_MB)
    throw new ConfigError('invalid configuration:\n  SCRIPT_MEMORY_TOTAL_MB: must be at least SCRIPT_MEMORY_MB (one script alone fits)');
  if (e.SECRETS_BACKEND === 'vault' && (!e.VAULT_ADDR || !e.VAULT_TOKEN)) {
    throw new ConfigError('invalid configuration:\n  VAULT_ADDR, VAULT_TOKEN: both required when SECRETS_BACKEND=vault');
  }
  if (e.TEMPORAL_WORKER_BUILD_ID && !e.TEMPORAL_WORKER_DEPLOYMENT)
    throw new ConfigError(
      'invalid configuration:\n  TEMPORAL_WORKER_BUILD_ID: needs TEMPORAL_WORKER_DEPLOYMENT (the deployment the build belongs to)',
    );
  const defaults = DEFAULT_MODELS[e.MODEL_PROVIDER]!;
  const tiers = {
    minuet: e.MODEL_TIER_MINUET ?? defaults.minuet,
    allegro: e.MODEL_TIER_ALLEGRO ?? defaults.allegro,
    forte: e.MODEL_TIER_FORTE ?? defaults.forte,
  };
  const fallbacks = { minuet: e.MODEL_TIER_MINUET_FALLBACKS, allegro: e.MODEL_TIER_ALLEGRO_FALLBACKS, forte: e.MODEL_TIER_FORTE_FALLBACKS };
  // The primary provider's endpoint is MODEL_BASE_URL / MODEL_API_KEY; the others' are their own variables.
  const endpoints: Partial<Record<ModelProvider, ModelEndpoint>> = {
    anthropic: { baseUrl: e.MODEL_ANTHROPIC_BASE_URL, apiKey: e.MODEL_ANTHROPIC_API_KEY },
    openai: { baseUrl: e.MODEL_OPENAI_BASE_URL, apiKey: e.MODEL_OPENAI_API_KEY },
    'openai-compatible': { baseUrl: e.MODEL_OPENAI_COMPATIBLE_BASE_URL, apiKey: e.MODEL_OPENAI_COMPATIBLE_API_KEY },
  };
  endpoints[e.MODEL_PROVIDER] = { baseUrl: e.MODEL_BASE_URL, apiKey: e.MODEL_API_KEY };
  const problems = [
    ...fallbackProblems({ provider: e.MODEL_PROVIDER, tiers }, fallbacks, endpoints),
    ...providerLimitProblems(e.PROVIDER_LIMITS, { provider: e.MODEL_PROVIDER, tiers }, fallbacks),
  ];
  if (problems.length) throw new ConfigError(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  const sentenceEncoderDir = e.SENTENCE_ENCODER_DIR ?? join(cadenzaCache(env), 'models', 'all-MiniLM-L6-v2-int8');
  const localEncoder: 'sentence-encoder' | 'word-vectors' = sentenceEncoderInstalled(sentenceEncoderDir)
    ? 'sentence-encoder'
    : 'word-vectors';
  const discoveryDefaults = DISCOVERY_DEFAULTS[e.EMBEDDINGS_BASE_URL ? 'endpoint' : localEncoder];
  const temporal = temporalProfile(env, e);
  return deepFreeze({
    port: e.PORT,
    telemetry: {
      /** The worker's Prometheus port (0: any free port); `off`: none. */
      workerMetricsPort: e.WORKER_METRICS_PORT,
      /** OpenTelemetry traces over OTLP/HTTP (the endpoint's `/v1/traces`); undefined: tracing is off. */
      tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT
        ? { tracesUrl: otlpTracesUrl(e.OTEL_EXPORTER_OTLP_ENDPOINT), serviceName: e.OTEL_SERVICE_NAME }
        : undefined,
    },
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    temporal: {
      /** The frontend `host:port`; undefined in dev (the embedded stack starts a dev server). */
      address: temporal.address,
      namespace: temporal.namespace ?? 'default',
      /** Temporal Cloud API key (sent as a bearer token; turns TLS on). */
      apiKey: temporal.apiKey,
      /** TLS to the frontend (certificate and key as file paths or data); undefined = plain, unless an API key is set. */
      tls: temporal.tls,
      /** Extra gRPC headers (`TEMPORAL_GRPC_META_*` or the profile's `grpc_meta`). */
      grpcMeta: temporal.grpcMeta,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      modelTaskQueue: `${e.TEMPORAL_TASK_QUEUE}-model`,
      /** Task queue of the tool calls (a worker with TOOL_CONCURRENCY slots serves it: they wait on I/O). */
      toolTaskQueue: `${e.TEMPORAL_TASK_QUEUE}-tools`,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      /** The Temporal Web UI the console links runs to (the embedded stack knows its own dev server's). */
      uiUrl: e.TEMPORAL_UI_URL,
      /**
       * Worker versioning: the Worker Deployment this worker's build belongs to (undefined: unversioned workers, as the
       * embedded default runs), its build id (undefined: derived from the workflow bundle's code) and when the worker
       * makes its build the deployment's current version.
       */
      deployment: e.TEMPORAL_WORKER_DEPLOYMENT
        ? { name: e.TEMPORAL_WORKER_DEPLOYMENT, buildId: e.TEMPORAL_WORKER_BUILD_ID, promote: e.TEMPORAL_WORKER_PROMOTE }
        : undefined,
    },
    model: {
      provider: e.MODEL_PROVIDER,
      baseUrl: e.MODEL_BASE_URL,
      apiKey: e.MODEL_API_KEY,
      tiers,
      /** Per tier, the `provider:model` targets a call goes on to, in order, when the one before is overloaded or down. */
      fallbacks,
      /** Each provider's endpoint (MODEL_PROVIDER's is MODEL_BASE_URL / MODEL_API_KEY), for the fallbacks that name it. */
      endpoints,
      concurrency: e.MODEL_CONCURRENCY,
      /** Per `provider:model`, requests and input/output tokens per minute, shared by every worker (a bucket in Postgres). */
      providerLimits: e.PROVIDER_LIMITS,
      promptCaching: e.MODEL_PROMPT_CACHING,
      maxTokens: e.MODEL_MAX_TOKENS,
      /** USD per million input and output tokens, per model id; a model absent here is unpriced. */
      prices: e.MODEL_PRICES,
    },
    /** Budgets of a mission that names none (unset: no budget); how long a `budgetPolicy: "pause"` mission waits at one. */
    budgets: { maxTokens: e.DEFAULT_MAX_TOKENS, maxCostUsd: e.DEFAULT_MAX_COST_USD, pauseTimeoutS: e.BUDGET_PAUSE_TIMEOUT_S },
    /** The OpenAI-compatible `/embeddings` endpoint joining memory retrieval; undefined when not configured. */
    embeddings: e.EMBEDDINGS_BASE_URL
      ? { baseUrl: e.EMBEDDINGS_BASE_URL, apiKey: e.EMBEDDINGS_API_KEY, model: e.EMBEDDINGS_MODEL }
      : undefined,
    /** The local sentence encoder's files (scripts/sentence-encoder.sh puts them there), used when no endpoint is set. */
    sentenceEncoderDir,
    /** The encoder used without an endpoint: the sentence encoder when its files are installed, else word vectors. */
    localEncoder,
    maxTurnsCap: e.MAX_TURNS_CAP,
    /** Sub-missions (`delegate`): how deep a tree of missions may grow below its root (0: no delegation). */
    maxDelegationDepth: e.MAX_DELEGATION_DEPTH,
    /** Tool-call slots per worker process: tool calls mostly wait on I/O, so thousands cost little. */
    toolConcurrency: e.TOOL_CONCURRENCY,
    /** Workflows a worker keeps in memory between tasks (sticky cache). */
    workflowCacheSize: e.WORKFLOW_CACHE_SIZE,
    /** The task queues this worker process serves (default all three: a process per queue scales each apart). */
    workerQueues: [...new Set(e.WORKER_QUEUES)],
    /**
     * Fair limits on running missions (undefined = unlimited) and on mission starts per user per minute; `startSettleS`:
     * the bound within which a mission left `starting` (its start failed) is settled in the background.
     */
    admission: {
      perUser: e.MAX_RUNNING_MISSIONS_PER_USER,
      perTenant: e.MAX_RUNNING_MISSIONS_PER_TENANT,
      startsPerMinutePerUser: e.MAX_STARTS_PER_MINUTE_PER_USER,
      startSettleS: e.START_SETTLE_SECONDS,
    },
    appsDir: e.APPS_DIR,
    /** Most app tools a mission is offered; beyond it the tools most relevant to the objective are preselected. */
    maxToolsPerMission: e.MAX_TOOLS_PER_MISSION,
    /** Files a mission's tools and scripts return: the largest one, how many, and their bytes together per mission. */
    missionFiles: { maxBytes: e.MISSION_FILE_MAX_BYTES, maxCount: e.MISSION_FILE_MAX_COUNT, totalBytes: e.MISSION_FILE_TOTAL_BYTES },
    /** How long a tool call that needs approval waits for a decision; then it counts as denied. */
    approvalTimeoutS: e.APPROVAL_TIMEOUT_S,
    /** Messages to missions: the most waiting for delivery at once; how long a session stays idle before it ends. */
    sessions: { maxQueuedMessages: e.MAX_QUEUED_MESSAGES, idleTtlS: e.SESSION_IDLE_TTL_S, historyEvents: e.SESSION_HISTORY_EVENTS },
    /** Context compaction: the prompt size (tokens) that folds older turns into a summary (0: never), and the turns kept verbatim. */
    compaction: { atTokens: e.CONTEXT_COMPACT_AT_TOKENS, keepTurns: e.CONTEXT_KEEP_TURNS },
    /** How long a delivery is retried before its endpoint is disabled; the private addresses webhooks may call. */
    webhooks: { retryHours: e.WEBHOOK_RETRY_HOURS, allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS },
    /**
     * Skill evals: the tier that grades prose expectations; whether activating a version needs a finished eval run, and
     * how far (a share of cases, 0–1) its pass rate may fall below the baseline's.
     */
    evals: {
      graderTier: e.EVAL_GRADER_TIER,
      requireForActivation: e.SKILL_ACTIVATION_REQUIRES_EVAL,
      maxRegression: e.EVAL_MAX_REGRESSION,
    },
    secrets: {
      /** SECRETS_MASTER_KEY entries as written (checked); empty: embedded default or no stored keys. */
      masterKeys: e.SECRETS_MASTER_KEY,
      /** Server-wide provider keys by provider id, from `PROVIDER_KEY_<ID>`. */
      providerKeys: providerKeys(env),
      /** Where user and tenant keys live: Postgres sealed under the master key, or a Vault/OpenBao KV v2 engine. */
      backend: e.SECRETS_BACKEND,
      vault:
        e.VAULT_ADDR && e.VAULT_TOKEN
          ? { address: e.VAULT_ADDR, token: e.VAULT_TOKEN, mount: e.VAULT_KV_MOUNT, prefix: e.VAULT_PATH_PREFIX }
          : undefined,
    },
    adminKey: e.CADENZA_ADMIN_KEY,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    /** Node's server timeouts: the whole request (headers and body) and the headers alone; responses (SSE) are not bound. */
    http: { requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_SECONDS * 1000, headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_SECONDS * 1000 },
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    /** How long an activity waits for an unreachable database before its attempt fails. */
    databaseOutageWaitSeconds: e.DATABASE_OUTAGE_WAIT_SECONDS,
    bodyLimitBytes: e.BODY_LIMIT_KB * 1024,
    skills: {
      /** Caps on an uploaded skill bundle (a zip): beyond any of them the upload is refused. */
      bundle: {
        maxFiles: e.SKILL_BUNDLE_MAX_FILES,
        maxFileBytes: e.SKILL_BUNDLE_MAX_FILE_KB * 1024,
        maxTotalBytes: e.SKILL_BUNDLE_MAX_TOTAL_KB * 1024,
        maxRatio: e.SKILL_BUNDLE_MAX_RATIO,
      },
      /**
       * Discovery: the lowest score that loads a skill, how close a `not_for` match may come before it suppresses, and
       * `embeddingWeight`, the share of meaning (cosine) in a skill's score.
       */
      discovery: {
        minScore: e.DISCOVERY_MIN_SCORE ?? discoveryDefaults.minScore,
        margin: e.DISCOVERY_MARGIN,
        embeddingWeight: e.DISCOVERY_EMBEDDING_WEIGHT ?? discoveryDefaults.embeddingWeight,
        minCosine: e.DISCOVERY_MIN_COSINE ?? 0,
      },
      /** Git imports: whether file:// and git:// URLs are accepted (admins, tests), the fetch's time and size bounds. */
      git: { localUrls: e.SKILL_GIT_LOCAL_URLS, timeoutMs: e.SKILL_GIT_TIMEOUT_S * 1000, maxBytes: e.SKILL_GIT_MAX_KB * 1024 },
    },
    /** Skill scripts: the sandbox's limits, the tools a script may call back, and the interpreters it runs. */
    scripts: {
      timeoutS: e.SCRIPT_TIMEOUT_S,
      cpuS: e.SCRIPT_CPU_S,
      /** Resident memory of one script (its cgroup's limit), or its address space where the worker has no cgroups. */
      memoryBytes: e.SCRIPT_MEMORY_MB * 1024 * 1024,
      /** Resident memory of all of a worker's scripts together (their parent cgroup's limit). */
      memoryTotalBytes: e.SCRIPT_MEMORY_TOTAL_MB * 1024 * 1024,
      /** Refuse scripts on an architecture without a seccomp filter instead of running them without one. */
      requireSeccomp: e.SCRIPT_REQUIRE_SECCOMP,
      maxProcesses: e.SCRIPT_MAX_PROCESSES,
      maxOpenFiles: e.SCRIPT_MAX_OPEN_FILES,
      maxOutputBytes: e.SCRIPT_MAX_OUTPUT_KB * 1024,
      tmpfsBytes: e.SCRIPT_TMPFS_MB * 1024 * 1024,
      maxToolCalls: e.SCRIPT_MAX_TOOL_CALLS,
      /** System tools (bare names) a script may call through its callback pipe. */
      toolAllowlist: e.SCRIPT_TOOL_ALLOWLIST,
      /** The Python 3 command, resolved to its real interpreter when first needed. */
      python: e.SCRIPT_PYTHON,
      /** The Node binary; undefined means the server's own. */
      node: e.SCRIPT_NODE,
    },
    /** The script factory (`create_script`): how many write → run → verify attempts it makes at most. */
    factory: { maxAttempts: e.FACTORY_MAX_ATTEMPTS },
  });
}

const configSchema = envSchema.transform(toConfig);

/** The variable names the configuration reads (kept in step with `.env.example` by a test). */
export const CONFIG_KEYS = Object.keys(envSchema.shape);

/** The schema itself, read by the generated reference (docs/configuration.md: defaults and ranges). */
export const CONFIG_SCHEMA = envSchema;

function providerKeys(env: Record<string, string | undefined>): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const id = PROVIDER_KEY.exec(name)?.[1];
    if (id && value?.trim()) keys[id.toLowerCase()] = value.trim();
  }
  return keys;
}

/**
 * The Temporal connection profile, read the way every Temporal SDK and the CLI read it (@temporalio/envconfig):
 * the profile `TEMPORAL_PROFILE` (default `default`) of the TOML file `TEMPORAL_CONFIG_FILE` when that is set, then
 * the TEMPORAL_* variables over it. No file is read unless named, so a developer's own CLI profile never leaks in.
 */
function temporalProfile(env: Record<string, string | undefined>, e: z.output<typeof envSchema>): ClientConfigProfile {
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith('TEMPORAL_GRPC_META_') && v !== undefined) vars[k] = v;
  const parsed = {
    TEMPORAL_ADDRESS: e.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: e.TEMPORAL_NAMESPACE,
    TEMPORAL_API_KEY: e.TEMPORAL_API_KEY,
    TEMPORAL_TLS: e.TEMPORAL_TLS,
    TEMPORAL_TLS_CLIENT_CERT_PATH: e.TEMPORAL_TLS_CLIENT_CERT_PATH,
    TEMPORAL_TLS_CLIENT_KEY_PATH: e.TEMPORAL_TLS_CLIENT_KEY_PATH,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: e.TEMPORAL_TLS_SERVER_CA_CERT_PATH,
    TEMPORAL_TLS_SERVER_NAME: e.TEMPORAL_TLS_SERVER_NAME,
  };
  for (const [k, v] of Object.entries(parsed)) if (v !== undefined) vars[k] = v;
  const file = e.TEMPORAL_CONFIG_FILE;
  if (!file && e.TEMPORAL_PROFILE)
    throw new ConfigError('invalid configuration:\n  TEMPORAL_PROFILE: needs TEMPORAL_CONFIG_FILE (the TOML file holding the profile)');
  if (file && !existsSync(file)) throw new ConfigError(`invalid configuration:\n  TEMPORAL_CONFIG_FILE: ${file} does not exist`);
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({
      ...(file ? { configSource: { path: file } } : { disableFile: true }),
      ...(e.TEMPORAL_PROFILE ? { profile: e.TEMPORAL_PROFILE } : {}),
      overrideEnvVars: vars,
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ConfigError(
      `invalid configuration:\n  TEMPORAL_CONFIG_FILE: cannot use ${file} (profile ${e.TEMPORAL_PROFILE ?? 'default'}): ${why}`,
    );
  }
  const tls = profile.tls;
  if (tls && !tls.disabled && !!tls.clientCert !== !!tls.clientKey) {
    throw new ConfigError(
      'invalid configuration:\n  TEMPORAL_TLS_CLIENT_CERT_PATH / TEMPORAL_TLS_CLIENT_KEY_PATH: a client certificate needs its key, and a key its certificate',
    );
  }
  return profile;
}

/** `T` read-only all the way down, but for bytes (which cannot be frozen). */
type DeepReadonly<T> = T extends ArrayBufferView ? T : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

function deepFreeze<T>(o: T): DeepReadonly<T> {
  // Certificate bytes (a Uint8Array) cannot be frozen; everything else is.
  if (ArrayBuffer.isView(o)) return o as DeepReadonly<T>;
  for (const v of Object.values(o as object)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o) as DeepReadonly<T>;
}
