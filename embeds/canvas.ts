import { compile } from 'vega-lite';
import { z } from 'zod';
import { CANVAS_TYPES, type CanvasType } from '../contracts/embeds.ts';

/** A canvas a tool result carried, checked: a Vega-Lite chart, a table or markdown. */
export type Canvas = { type: CanvasType; title: string; spec: unknown };

const MAX_SPEC_CHARS = 200_000;

const shape = z.object({ type: z.enum(CANVAS_TYPES), title: z.string().trim().min(1).max(200), spec: z.unknown() });
const table = z.object({
  columns: z.array(z.string().min(1).max(200)).min(1).max(100),
  rows: z.array(z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())])).max(10_000),
});
const markdown = z.string().min(1).max(MAX_SPEC_CHARS);

/** The canvas, or why it is invalid (the tool result keeps its other parts: an invalid canvas never fails the tool). */
export function checkCanvas(item: unknown): { ok: true; canvas: Canvas } | { ok: false; problem: string } {
  const parsed = shape.safeParse(item);
  if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error) };
  const { type, title, spec } = parsed.data;
  if (spec === undefined) return { ok: false, problem: 'spec is missing' };
  if (JSON.stringify(spec).length > MAX_SPEC_CHARS) return { ok: false, problem: `spec is over ${MAX_SPEC_CHARS} characters` };
  const problem = type === 'vega-lite' ? vegaLiteProblem(spec) : checkWith(type === 'table' ? table : markdown, spec);
  return problem ? { ok: false, problem: `${type} "${title}": ${problem}` } : { ok: true, canvas: { type, title, spec } };
}

function checkWith(schema: z.ZodType, spec: unknown): string | undefined {
  const r = schema.safeParse(spec);
  return r.success ? undefined : describeIssues(r.error);
}

/** Vega-Lite's own compiler decides; it throws on a spec it cannot compile (no mark, an unknown one, bad types). */
function vegaLiteProblem(spec: unknown): string | undefined {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return 'spec is not an object';
  try {
    compile(structuredClone(spec) as Parameters<typeof compile>[0], { logger: quiet });
    return undefined;
  } catch (err) {
    return `not a valid Vega-Lite spec (${(err instanceof Error ? err.message : String(err)).slice(0, 200)})`;
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(canvas)'}: ${i.message}`)
    .join('; ');
}

// Vega-Lite logs its warnings to the console by default; a canvas's fate is decided by compile alone.
const quiet = {
  level(): number {
    return 0;
  },
  error(): typeof quiet {
    return quiet;
  },
  warn(): typeof quiet {
    return quiet;
  },
  info(): typeof quiet {
    return quiet;
  },
  debug(): typeof quiet {
    return quiet;
  },
} as unknown as NonNullable<NonNullable<Parameters<typeof compile>[1]>['logger']>;
