import { RE2JS } from 're2js';

/**
 * A regular expression that a user, a skill or an app supplied, compiled for RE2 (re2js): matching takes time
 * linear in the text whatever the pattern, so no pattern can stall the shared worker on backtracking. RE2 has no
 * backreferences and no lookarounds; such patterns are refused when declared, never at match time.
 */
export type UserPattern = { readonly source: string; test(text: string): boolean; toString(): string };

/** A pattern RE2 cannot compile; the message names the pattern and says why. */
export class UserPatternError extends Error {
  override name = 'UserPatternError';
}

/** Compiles `source`; throws a UserPatternError naming it when RE2 does not support it or it is invalid. */
export function compileUserPattern(source: string): UserPattern {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (err) {
    const why = (err as Error).message.replace(/^error parsing regexp: /, '');
    throw new UserPatternError(
      `pattern ${JSON.stringify(source)} is not supported (${why}); patterns use RE2 syntax: no backreferences or lookarounds`,
    );
  }
  // toString is the pattern itself: Ajv keys its compiled patterns by it.
  return { source, test: (text) => compiled.test(text), toString: () => `/${source}/` };
}

/** Why `source` cannot be a pattern, or undefined when it can. */
export function userPatternProblem(source: string): string | undefined {
  try {
    compileUserPattern(source);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The same engine in the form Ajv takes (`code.regExp`), so JSON-Schema `pattern`s of apps and MCP servers use RE2. */
export const ajvUserPatterns = Object.assign((source: string) => compileUserPattern(source), {
  // Ajv writes this name only into standalone validation code, which Cadenza never generates.
  code: 'compileUserPattern',
});
