import { Ajv, type ValidateFunction } from 'ajv';
import { z } from 'zod';
import { hasPlaceholders, templateProblem } from './env-template.ts';
import { APP_ID_MAX_LENGTH, APP_ID_PATTERN, TOOL_NAME_PATTERN } from '../contracts/names.ts';

/** Compiles a tool's JSON-Schema input into a validator; throws when the schema itself is invalid. */
export type InputSchemaCompiler = (schema: Record<string, unknown>) => ValidateFunction;

/** One Ajv instance per registry load; strict about unknown keywords so schema typos fail at start-up. */
export function createInputSchemaCompiler(): InputSchemaCompiler {
  const ajv = new Ajv({
    allErrors: true,
    // Formats are hints for the model; without ajv-formats, checking them would reject unknown ones.
    validateFormats: false,
    strictTypes: false,
    strictTuples: false,
    // Two apps may reuse a `$id`; registering schemas globally would make the second one fail.
    addUsedSchema: false,
  });
  return (schema) => ajv.compile(schema);
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

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

const providerSchema = z.strictObject({
  name: nonEmpty,
  no_api_key: z.boolean().optional(),
  env: z.array(z.string().regex(ENV_NAME, 'must be an environment variable name')).optional(),
});

const httpSchema = z.strictObject({
  url,
  method: z.literal('POST', { error: 'only POST is supported' }).default('POST'),
  headers: z.record(z.string().regex(HEADER_NAME, 'must be a valid header name'), templated).default({}),
});

/** The zod schema of `apps/<app-id>/app.yml`; each tool's `input_schema` comes out compiled. */
export function createAppManifestSchema(compile: InputSchemaCompiler = createInputSchemaCompiler()) {
  const inputSchema = z.record(z.string(), z.unknown()).transform((schema, ctx) => {
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

  const toolSchema = z.strictObject({
    name: z.string().regex(TOOL_NAME_PATTERN, 'must be 1-48 lowercase letters, digits or underscores'),
    description: nonEmpty,
    input_schema: inputSchema,
    timeout_s: z.int().min(1).max(600).default(30),
    retries: z.int().min(0).max(5).default(2),
    http: httpSchema,
  });

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
      tools: z.array(toolSchema).min(1, 'must declare at least one tool'),
    })
    .superRefine((app, ctx) => {
      const seen = new Set<string>();
      app.tools.forEach((tool, i) => {
        if (seen.has(tool.name)) {
          ctx.addIssue({ code: 'custom', message: `duplicate tool name '${tool.name}'`, path: ['tools', i, 'name'] });
        }
        seen.add(tool.name);
      });
    });
}

/** A parsed and compiled `app.yml`. */
export type AppManifest = z.output<ReturnType<typeof createAppManifestSchema>>;
