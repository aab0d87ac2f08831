import { z } from 'zod';
import { timestamp } from './openapi/route-doc.ts';

const EVAL_RUN_STATUSES = ['running', 'completed', 'budget_reached', 'cancelled', 'failed'] as const;
const event = <T extends z.ZodRawShape>(shape: T) => z.looseObject({ seq: z.number().int(), at: timestamp, ...shape });
const unit = { caseId: z.string(), side: z.enum(['candidate', 'baseline']), repeat: z.number().int() };
const stat = z.looseObject({ mean: z.number(), stddev: z.number(), min: z.number(), max: z.number() });
const side = z.looseObject({
  graded: z.number(),
  passed: z.number(),
  passRate: z.number(),
  costUsd: z.number(),
  costPerCaseUsd: z.number(),
});

/** The `data` of each SSE event type of GET /eval-runs/:id/events (`id:` its seq), by `event:` name (contracts/evals.ts). */
export const evalRunEventSchemas: Record<string, z.ZodType> = {
  run_status: event({ type: z.literal('run_status'), status: z.enum(EVAL_RUN_STATUSES) }),
  unit_started: event({ type: z.literal('unit_started'), ...unit, missionId: z.uuid() }),
  unit_finished: event({ type: z.literal('unit_finished'), ...unit, missionId: z.uuid() }),
  unit_graded: event({
    type: z.literal('unit_graded'),
    ...unit,
    missionId: z.uuid(),
    status: z.enum(['passed', 'failed']),
    costUsd: z.number(),
  }),
  unit_not_run: event({ type: z.literal('unit_not_run'), ...unit, reason: z.string() }),
  run_summary: event({
    type: z.literal('run_summary'),
    progress: z.looseObject({ total: z.number(), graded: z.number(), running: z.number(), notRun: z.number() }),
    candidate: side,
    baseline: side,
    delta: z.looseObject({ passRate: z.number(), overRepeats: stat }),
    /** What the grader calls cost (absent from runs that ended before it was kept). */
    grading: z.looseObject({ costUsd: z.number() }).optional(),
  }),
  // Without seq when the stream itself fails (the run's workflow is gone).
  error: z.looseObject({ message: z.string() }),
};
