import type { ScheduleOverlapPolicy, ScheduleSpec } from '@temporalio/client';
import type { ScheduleOverlap } from '../contracts/schedules.ts';

// What a schedule's timing may say, checked before Temporal sees it, so a caller's mistake is a 400 naming the field
// (Temporal's own refusal is mapped to a 400 as well, as the last word). Pure: no I/O.

const DURATION = /^([1-9][0-9]{0,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a duration such as `30s`, `15m`, `1h`, `7d`; undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  const m = DURATION.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

/** True for a time zone name the IANA database knows (`Europe/Paris`, `UTC`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
/** The five fields of a cron expression: their range and, for month and weekday, their names. */
const FIELDS: Array<{ name: string; min: number; max: number; names?: string[]; nameBase?: number }> = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, nameBase: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, nameBase: 0 },
];

/** Why a cron expression is not one Temporal takes (five fields, or a macro such as `@daily`); undefined when it is. */
export function cronProblem(expr: string): string | undefined {
  const text = expr.trim().toLowerCase();
  if (MACROS.has(text)) return undefined;
  const parts = text.split(/\s+/);
  if (parts.length !== 5) return `needs 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`;
  for (const [i, part] of parts.entries()) {
    const field = FIELDS[i]!;
    for (const item of part.split(',')) {
      const why = itemProblem(item, field);
      if (why) return `${field.name} field "${part}": ${why}`;
    }
  }
  return undefined;
}

function itemProblem(item: string, field: (typeof FIELDS)[number]): string | undefined {
  const [range, step, extra] = item.split('/');
  if (extra !== undefined || range === undefined) return 'more than one step';
  if (step !== undefined && !/^[1-9][0-9]{0,2}$/.test(step)) return `step "${step}" is not a positive number`;
  if (range === '*' || (range === '?' && field.min !== 0 && field.name !== 'month')) return undefined;
  const bounds = range.split('-');
  if (bounds.length > 2) return `"${range}" is not a value or a range`;
  const values = bounds.map((b) => value(b, field));
  if (values.some((v) => v === undefined)) return `"${range}" is outside ${field.min}-${field.max}`;
  if (values.length === 2 && values[0]! > values[1]!) return `range "${range}" runs backwards`;
  return undefined;
}

function value(text: string, field: (typeof FIELDS)[number]): number | undefined {
  const named = field.names?.indexOf(text) ?? -1;
  if (named >= 0) return named + field.nameBase!;
  if (!/^[0-9]{1,2}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= field.min && n <= field.max ? n : undefined;
}

/** The spec as the API takes it: exactly one of `cron` and `every`, and a time zone (UTC when absent). */
export type ScheduleTiming = { cron?: string | undefined; every?: string | undefined; timezone?: string | undefined };

/** The Temporal Schedule spec of a timing already checked by the API's schema. */
export function temporalSpec(timing: ScheduleTiming): ScheduleSpec {
  return {
    ...(timing.cron ? { cronExpressions: [timing.cron.trim()] } : {}),
    ...(timing.every ? { intervals: [{ every: durationMs(timing.every)! }] } : {}),
    timezone: timing.timezone ?? 'UTC',
  };
}

const OVERLAP_POLICY: Record<ScheduleOverlap, ScheduleOverlapPolicy> = { skip: 'SKIP', buffer_one: 'BUFFER_ONE', allow_all: 'ALLOW_ALL' };
/** Temporal's overlap policy for the API's word. */
export const temporalOverlap = (overlap: ScheduleOverlap): ScheduleOverlapPolicy => OVERLAP_POLICY[overlap];

/**
 * A moment as the wall clock of `timeZone` shows it, with that zone's offset: `2026-12-04T09:00:00+09:00`. Next run
 * times are given this way, so a schedule's reader sees them in the zone it was set in.
 */
export function inZone(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : String(parts.timeZoneName).replace('GMT', '');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}
