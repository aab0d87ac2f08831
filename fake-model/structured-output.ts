import type { FakeProtocol } from './fake-model-types.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const SCHEMA_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The JSON Schema a request asks its answer to match, read the way each API takes it (Anthropic's
 * `output_config.format`, OpenAI's `response_format`); a malformed one is the 400 the real API would answer.
 */
export function requestedSchema(protocol: FakeProtocol, body: unknown): { schema?: Json } | { error: string } {
  const b = isObject(body) ? body : {};
  if (protocol === 'anthropic') {
    const format = isObject(b.output_config) ? b.output_config.format : undefined;
    if (format === undefined || format === null) return {};
    if (!isObject(format) || format.type !== 'json_schema') return { error: "output_config.format.type: Input should be 'json_schema'" };
    if (!isObject(format.schema)) return { error: 'output_config.format.schema: Field required' };
    return { schema: format.schema };
  }
  const format = b.response_format;
  if (format === undefined) return {};
  if (!isObject(format)) return { error: "Invalid type for 'response_format': expected an object." };
  if (format.type === 'text' || format.type === 'json_object') return {};
  if (format.type !== 'json_schema') return { error: `Invalid value for 'response_format.type': ${JSON.stringify(format.type)}.` };
  const spec = format.json_schema;
  if (!isObject(spec)) return { error: "Missing required parameter: 'response_format.json_schema'." };
  if (typeof spec.name !== 'string' || !SCHEMA_NAME.test(spec.name))
    return { error: "Invalid 'response_format.json_schema.name': must match ^[a-zA-Z0-9_-]{1,64}$." };
  return isObject(spec.schema) ? { schema: spec.schema } : {};
}

/**
 * A value matching `schema`, as constrained decoding would produce when nothing is scripted: the required properties
 * (all when none are listed), the first enum or const, the least of each type. Enough for the schemas tests write.
 */
export function sampleOf(schema: unknown): unknown {
  if (!isObject(schema)) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : Object.keys(properties);
      return Object.fromEntries(required.map((name) => [name, sampleOf(properties[name])]));
    }
    case 'array':
      return Array.from({ length: typeof schema.minItems === 'number' ? schema.minItems : 0 }, () => sampleOf(schema.items));
    case 'string':
      return 'x'.repeat(typeof schema.minLength === 'number' ? schema.minLength : 4);
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}
