import { Ajv } from 'ajv';
import { ajvUserPatterns } from './user-pattern.ts';

/**
 * An Ajv for JSON Schemas that users, skill authors, app authors and MCP servers supply (tool inputs, output
 * schemas): every error reported, formats left as hints, and patterns run by RE2.
 */
export function userSchemaAjv(): Ajv {
  return new Ajv({
    allErrors: true,
    // Formats are hints for the model; without ajv-formats, checking them would reject unknown ones.
    validateFormats: false,
    strictTypes: false,
    strictTuples: false,
    // Two apps may reuse a `$id`, and an output schema is compiled once: registering schemas globally would make the
    // second one with the same `$id` fail.
    addUsedSchema: false,
    // `pattern` and `patternProperties` come from the schema's author: RE2, linear in the value checked.
    code: { regExp: ajvUserPatterns },
  });
}
