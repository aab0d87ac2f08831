import { z } from 'zod';
import { MAX_TURNS_CEILING } from '../contracts/limits.ts';
import { SCHEDULE_OVERLAPS } from '../contracts/schedules.ts';
import { cronProblem, durationMs, isTimeZone } from '../schedules/schedule-spec.ts';
import { timestamp } from './openapi/route-doc.ts';

// A schedule's request bodies and replies. Cron, time zone and durations are checked here, before Temporal sees them,
// so each mistake is a 400 naming its field.

const DURATION_HINT = 'a whole number and a unit: 30s, 15m, 1h, 7d';
const duration = (min: string) =>
  z
    .string()
    .regex(/^[1-9][0-9]{0,6}(s|m|h|d)$/, DURATION_HINT)
    .refine((s) => durationMs(s)! >= durationMs(min)!, `at least ${min}`)
    .refine((s) => durationMs(s)! <= durationMs('366d')!, 'at most 366d');
const cron = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .superRefine((expr, ctx) => {
    const why = cronProblem(expr);
    if (why) ctx.addIssue({ code: 'custom', message: `not a cron expression: ${why}` });
  });
const timezone = z.string().trim().min(1).max(64).refine(isTimeZone, 'unknown time zone (an IANA name such as Europe/Paris)');
const limits = z
  .object({
    maxTurns: z.number().int().min(1).max(MAX_TURNS_CEILING).optional(),
    maxTokens: z.number().int().min(1).max(1_000_000_000).optional(),
    maxCostUsd: z.number().positive().max(100_000).optional(),
  })
  .strict();
const timing = { cron: cron.optional(), every: duration('1s').optional(), timezone: timezone.optional() };

/** Exactly one of `cron` and `every`: a 400 naming `cron` when neither or both are given. */
const oneTiming = (t: { cron?: string | undefined; every?: string | undefined }, ctx: z.RefinementCtx) => {
  if ((t.cron === undefined) === (t.every === undefined))
    ctx.addIssue({ code: 'custom', path: ['cron'], message: 'give exactly one of cron and every' });
};

export const createScheduleBody = z
  .object({
    skill: z.string().trim().min(1).max(64),
    objective: z.string().trim().min(1).max(20_000),
    workspaceCode: z.string().trim().min(1).max(128),
    ...timing,
    overlap: z.enum(SCHEDULE_OVERLAPS).default('skip'),
    catchupWindow: duration('10s').default('1m'),
    limits: limits.default({}),
    paused: z.boolean().default(false),
  })
  .strict()
  .superRefine(oneTiming);

/** A change: the timing as a whole (cron or every, and the zone), the objective, the limits, the overlap policy. */
export const updateScheduleBody = z
  .object({
    ...timing,
    objective: z.string().trim().min(1).max(20_000).optional(),
    overlap: z.enum(SCHEDULE_OVERLAPS).optional(),
    catchupWindow: duration('10s').optional(),
    limits: limits.optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.cron !== undefined || b.every !== undefined) oneTiming(b, ctx);
    else if (b.timezone !== undefined) ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'give it with cron or every' });
  });

export type CreateScheduleBody = z.infer<typeof createScheduleBody>;
export type UpdateScheduleBody = z.infer<typeof updateScheduleBody>;

const spec = z.looseObject({ cron: z.string().optional(), every: z.string().optional(), timezone: z.string() });
export const scheduleSchema = z.looseObject({
  id: z.uuid(),
  skill: z.string(),
  objective: z.string(),
  workspaceCode: z.string(),
  spec,
  overlap: z.enum(SCHEDULE_OVERLAPS),
  catchupWindow: z.string(),
  limits: limits,
  /** In a list: as last set through the API or seen by the detail; in the detail: from Temporal's description. */
  paused: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
  links: z.looseObject({ self: z.string(), missions: z.string() }),
});

export const scheduleRunSchema = z.looseObject({
  runKey: z.string(),
  scheduledAt: timestamp,
  outcome: z.enum(['started', 'refused', 'failed']),
  missionId: z.uuid().nullable(),
  reason: z.string().nullable(),
  at: timestamp,
});

export const scheduleDetailSchema = scheduleSchema.extend({
  /** The next times it runs, on the wall clock of its time zone with that zone's offset. */
  nextRunTimes: z.array(timestamp),
  actions: z.looseObject({ taken: z.number().int(), skippedOverlap: z.number().int(), running: z.number().int() }),
  /** Its latest runs, newest first: the mission each started, or why none was. */
  runs: z.array(scheduleRunSchema),
});
