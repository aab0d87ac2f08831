import type { ValidateFunction } from 'ajv';
import { z } from 'zod';
import { hasPlaceholders, providerPlaceholders, templateProblem } from './env-template.ts';
import { APP_ID_MAX_LENGTH, APP_ID_PATTERN, PROVIDER_ID_PATTERN, providerId, TOOL_NAME_PATTERN } from '../contracts/names.ts';
import { mcpServerSchema } from './mcp/mcp-schema.ts';
import { userSchemaAjv } from '../lib/user-schema.ts';

/** Compiles a tool's JSON-Schema input into a validator; throws when the schema itself is invalid. */
export type InputSchemaCompiler = (schema: Record<string, unknown>) => ValidateFunction;

/** One Ajv instance per registry load; strict about unknown keywords so schema typos fail at start-up. */
export function createInputSchemaCompiler(): InputSchemaCompiler {
  const ajv = userSchemaAjv();
  return (schema) => ajv.compile(schema);
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const nonEmpty = z.string().trim().min(1, 'must not be empty');

const templated = z.string().superRefine((value, ctx) => {
  const problem = templateProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const url = templated.superRefine((value, ctx) => {
  // A URL built from `${NAME}` is checked once filled, at call time.
  if (hasPlaceholders(value)) return;
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL or contain ${NAME} placeholders' });
  }
});

const healthSchema = z.strictObject({
  url,
  /** Seconds a probe result is trusted; 0 probes whenever availability is computed. */
  interval_s: z.int().min(0).max(86_400).default(60),
  timeout_s: z.int().min(1).max(60).default(5),
});

/** `- Brave` or `{name: Brave, no_api_key: true, health: {url}}`, normalised to one shape. */
const providerSchema = z
  .union([nonEmpty, z.strictObject({ name: nonEmpty, no_api_key: z.boolean().optional(), health: healthSchema.optional() })], {
    error: 'must be a provider name or {name, no_api_key?, health?}',
  })
  .transform((p, ctx): AppProviderManifest => {
    const long = typeof p === 'string' ? { name: p } : p;
    const id = providerId(long.name);
    if (!PROVIDER_ID_PATTERN.test(id)) {
      ctx.addIssue({ code: 'custom', message: `provider name '${long.name}' has no letters or digits` });
      return z.NEVER;
    }
    return {
      name: long.name,
      id,
      noApiKey: long.no_api_key ?? false,
      ...(long.health ? { health: { url: long.health.url, intervalS: long.health.interval_s, timeoutS: long.health.timeout_s } } : {}),
    };
  });

/** A provider as declared: `id` is derived from the name; `noApiKey` means the secret lookup is not used for it. */
export type AppProviderManifest = {
  name: string;
  id: string;
  noApiKey: boolean;
  health?: { url: string; intervalS: number; timeoutS: number };
};

const httpSchema = z.strictObject({
  url,
  method: z.literal('POST', { error: 'only POST is supported' }).default('POST'),
  headers: z.record(z.string().regex(HEADER_NAME, 'must be a valid header name'), templated).default({}),
});

/** The executors a tool may declare; exactly one per tool (`runs: client`: the mission's caller runs it). */
export const EXECUTORS = ['http', 'runs'] as const;
const TOOL_FIELDS = new Set([
  ...['name', 'description', 'input_schema', 'output_schema', 'timeout_s', 'retries', 'providers', 'approval'],
  ...EXECUTORS,
]);
/** A tool's timeout when its caller runs it: how long a mission waits for the result (a person may be answering). */
const CLIENT_TIMEOUT_S = { default: 300, max: 86_400 };
const HTTP_TIMEOUT_S = { default: 30, max: 600 };

/**
 * The zod schema of one tool of an app; checked on its own so that one broken tool is skipped alone. `${provider.<id>}`
 * placeholders must name a provider of the tool that takes an API key.
 */
export function createToolSchema(compile: InputSchemaCompiler, providers: readonly AppProviderManifest[]) {
  const jsonSchema = z.record(z.string(), z.unknown()).transform((schema, ctx) => {
    if (schema.type !== 'object') {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON Schema with type: object' });
      return z.NEVER;
    }
    try {
      return { schema, validate: compile(schema) };
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `invalid JSON Schema: ${(err as Error).message}` });
      return z.NEVER;
    }
  });
  const byName = new Map(providers.flatMap((p) => [[p.name, p] as const, [p.id, p] as const]));

  return z
    .record(z.string(), z.unknown())
    .superRefine((raw, ctx) => {
      const unknown = Object.keys(raw).filter((k) => !TOOL_FIELDS.has(k));
      for (const key of unknown) {
        ctx.addIssue({ code: 'custom', message: `unknown field or executor '${key}' (executors: ${EXECUTORS.join(', ')})`, path: [key] });
      }
      const declared = EXECUTORS.filter((e) => e in raw);
      if (declared.length === 0) ctx.addIssue({ code: 'custom', message: 'no executor: declare http: {url} or runs: client' });
      if (declared.length > 1) ctx.addIssue({ code: 'custom', message: 'two executors: declare http: {url} or runs: client, not both' });
      if ('output_schema' in raw && !('runs' in raw))
        ctx.addIssue({ code: 'custom', message: 'output_schema is for tools with runs: client (their results are checked against it)' });
    })
    .pipe(
      z.object({
        name: z.string().regex(TOOL_NAME_PATTERN, 'must be 1-48 lowercase letters, digits or underscores'),
        description: nonEmpty,
        input_schema: jsonSchema,
        /** The JSON Schema a client tool's result must match (checked as the result arrives). */
        output_schema: jsonSchema.optional(),
        /** Absent: HTTP_TIMEOUT_S's default, or CLIENT_TIMEOUT_S's for a client tool (its result's deadline). */
        timeout_s: z.int().min(1).max(CLIENT_TIMEOUT_S.max).optional(),
        retries: z.int().min(0).max(5).default(2),
        /** The app providers this tool needs (by name or id); all of the app's when absent. */
        providers: z.array(nonEmpty).optional(),
        /** `required`: a person approves (or edits, or denies) every call before it runs. */
        approval: z.enum(['required', 'none'], { error: "must be 'required' or 'none'" }).default('none'),
        http: httpSchema.optional(),
        runs: z.literal('client', { error: "must be 'client' (declare http: for a tool Cadenza calls)" }).optional(),
      }),
    )
    .transform((tool, ctx) => {
      const limits = tool.runs === 'client' ? CLIENT_TIMEOUT_S : HTTP_TIMEOUT_S;
      if (tool.timeout_s !== undefined && tool.timeout_s > limits.max)
        ctx.addIssue({ code: 'custom', message: `must be at most ${limits.max}`, path: ['timeout_s'] });
      const needed: AppProviderManifest[] = [];
      for (const [i, name] of (tool.providers ?? providers.map((p) => p.name)).entries()) {
        const provider = byName.get(name) ?? byName.get(providerId(name));
        if (provider) needed.push(provider);
        else ctx.addIssue({ code: 'custom', message: `'${name}' is not one of the app's providers`, path: ['providers', i] });
      }
      const templates = tool.http ? [tool.http.url, ...Object.values(tool.http.headers)] : [];
      for (const id of templates.flatMap(providerPlaceholders)) {
        const provider = needed.find((p) => p.id === id);
        if (!provider) ctx.addIssue({ code: 'custom', message: `\${provider.${id}} names no provider of this tool`, path: ['http'] });
        else if (provider.noApiKey)
          ctx.addIssue({ code: 'custom', message: `\${provider.${id}}: provider ${provider.name} is declared no_api_key`, path: ['http'] });
      }
      return { ...tool, timeout_s: tool.timeout_s ?? limits.default, needs: needed };
    });
}

/** The zod schema of `apps/<app-id>/app.yml` without its tools' details (each tool is checked by `createToolSchema`). */
export function createAppManifestSchema() {
  return z
    .strictObject({
      id: z
        .string()
        .max(APP_ID_MAX_LENGTH)
        .regex(APP_ID_PATTERN, 'must be kebab-case: lowercase letters and digits separated by single hyphens'),
      name: nonEmpty,
      description: nonEmpty,
      providers: z.array(providerSchema).default([]),
      requires_account: nonEmpty.optional(),
      /** false: hidden until an admin enables the app for a tenant. */
      default_enabled: z.boolean().default(true),
      tools: z.array(z.unknown()).min(1, 'must declare at least one tool').optional(),
      /** An MCP server whose tools the worker lists at start-up, instead of `tools:`. */
      mcp: mcpServerSchema.optional(),
    })
    .superRefine((app, ctx) => {
      if ((app.tools === undefined) === (app.mcp === undefined)) {
        ctx.addIssue({ code: 'custom', message: 'declare either tools: (HTTP tools) or mcp: (an MCP server), not both or neither' });
      }
      const seen = new Set<string>();
      app.providers.forEach((p, i) => {
        if (seen.has(p.id)) ctx.addIssue({ code: 'custom', message: `duplicate provider '${p.name}'`, path: ['providers', i] });
        seen.add(p.id);
      });
    });
}

/** A parsed `app.yml` whose tools are still unchecked. */
export type AppManifest = z.output<ReturnType<typeof createAppManifestSchema>>;
/** One checked and compiled tool of an app. */
export type ToolManifest = z.output<ReturnType<typeof createToolSchema>>;
