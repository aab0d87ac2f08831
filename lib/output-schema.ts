import type { ErrorObject, ValidateFunction } from 'ajv';
import { userSchemaAjv } from './user-schema.ts';
import type { OutputCheck } from '../contracts/mission.ts';

/**
 * A mission's output schema (issue 35 part 3): the JSON Schema its final answer must match, given at the start
 * (`outputSchema`) or by the skill (`metadata.cadenza-output-schema`). Checked when given (the API, skill authoring)
 * and applied to each answer by the model activity, which returns the verdict; the workflow decides what follows.
 */

/** The largest output schema accepted, as JSON text: it goes with every model request of the mission. */
export const MAX_OUTPUT_SCHEMA_CHARS = 16_384;

// One instance per process: compiling is pure (no I/O), and each schema is dropped from Ajv's cache once compiled.
const ajv = userSchemaAjv();

/** What is wrong with `schema` as an output schema, or undefined when it is a valid JSON Schema of an object. */
export function outputSchemaProblem(schema: unknown): string | undefined {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'must be a JSON Schema object';
  if ((schema as Record<string, unknown>).type !== 'object')
    return 'must describe an object (type: "object"), as the providers\' structured outputs require';
  if (JSON.stringify(schema).length > MAX_OUTPUT_SCHEMA_CHARS) return `must be at most ${MAX_OUTPUT_SCHEMA_CHARS} characters as JSON`;
  try {
    compileOutputSchema(schema as Record<string, unknown>);
    return undefined;
  } catch (err) {
    return `is not a valid JSON Schema: ${(err as Error).message}`;
  }
}

/** The validator of a checked schema; throws when the schema is not valid JSON Schema. */
export function compileOutputSchema(schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

// A model asked for JSON sometimes fences it; the fence is not part of the answer.
const FENCED = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

/** Parses the answer's text as JSON and validates it. */
export function checkOutput(text: string, validate: ValidateFunction): OutputCheck {
  const trimmed = text.trim();
  const json = FENCED.exec(trimmed)?.[1] ?? trimmed;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return { ok: false, errors: `the answer is not JSON (${(err as Error).message})` };
  }
  if (validate(value)) return { ok: true, value };
  return { ok: false, errors: describeErrors(validate.errors) };
}

/** At most 10 errors, each `<path> <message>`, `/` for the whole value. */
function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const described = (errors ?? []).slice(0, 10).map((e) => {
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params.additionalProperty)}'` : '';
    return `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${extra}`;
  });
  return described.join('; ') || 'does not match the output schema';
}
