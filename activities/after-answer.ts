import { Context } from '@temporalio/activity';
import type { MissionEndStatus } from '../contracts/mission.ts';

/** A mission's end as the activity that recorded it wrote it: what the end log and the ended metric need. */
export type RecordedEnd = {
  skillName: string;
  skillVersion: number;
  status: MissionEndStatus;
  createdAt: Date;
  finishedAt: Date;
  /** The failure's phase, when it failed or was cancelled. */
  phase?: string;
};

/** The end as recorded, from the mission row the recording activity read and what it wrote. */
export const recordedEnd = (
  mission: { skill_name: string; skill_version: number; created_at: Date | string },
  status: MissionEndStatus,
  finishedAt: Date,
  phase?: string,
): RecordedEnd => ({
  skillName: mission.skill_name,
  skillVersion: mission.skill_version,
  status,
  createdAt: new Date(mission.created_at),
  finishedAt,
  ...(phase !== undefined ? { phase } : {}),
});

/**
 * What an activity's own statements told it that the work after its answer needs (the worker's interceptors: the
 * start metric, the end log, the webhook wake-up), so that work reads nothing again. Never part of the answer: the
 * workflow's history does not carry it.
 */
export type AfterAnswer = {
  /** prepareMission: the skill the mission runs. */
  started?: { skillName: string };
  /** completeMission, failMission: the end written. */
  ended?: RecordedEnd;
  /** A recording activity: the endpoints with a delivery of its source pending once its statement committed. */
  owedEndpoints?: string[];
};

// Keyed by the execution's Context (one per attempt, the object the interceptors are built with): gone with it.
const notes = new WeakMap<Context, AfterAnswer>();

/** Leaves part of the running activity's note (called inside the activity, once its records are written). */
export function leaveAfterAnswer(part: AfterAnswer): void {
  const ctx = Context.current();
  notes.set(ctx, { ...notes.get(ctx), ...part });
}

/** The note the activity of `ctx` left; empty when it left none. */
export function afterAnswer(ctx: Context): AfterAnswer {
  return notes.get(ctx) ?? {};
}
