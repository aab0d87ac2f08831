import type { ApprovalRecord } from './approvals.ts';
import type { MissionEvent } from './events.ts';
import type {
  CompactionInput,
  CompactionResult,
  MissionEndStatus,
  MissionError,
  MissionPlan,
  MissionResult,
  ModelTurnInput,
  ModelTurnResult,
  ProviderTurn,
  ProviderTurnInput,
  ToolCallEnd,
  ToolCallInput,
  ToolCallResult,
} from './mission.ts';
import type { FactoryOutcome, FactoryPlan, FactoryPreparation, FactoryRun, FactoryScript, ScriptFactoryInput } from './script-factory.ts';

/**
 * The activities the workflows proxy, as the workflows call them: `createActivities` (activities/) is typed to
 * satisfy this, so workflow code names no file above it.
 */

/** The ids of one create_script call. */
export type FactoryCallIds = Pick<ScriptFactoryInput, 'missionId' | 'turn' | 'toolUseId' | 'embedId'>;
/** One factory attempt's step: the call, the plan and the attempt's number. */
export type FactoryAttemptInput = FactoryCallIds & { plan: FactoryPlan; attempt: number };

export interface MissionActivities {
  /** The frozen plan of the mission: tier, turn limit, budget, tools. */
  prepareMission(input: { missionId: string }): Promise<MissionPlan>;
  /** Stores the result and the final events; answers the canvas ids and follow-ups of the mission's embeds. */
  completeMission(input: {
    missionId: string;
    result: MissionResult;
    /** The events the workflow logs once this returns. */
    finalEvents: MissionEvent[];
    /** A session's last exchange began at this turn: its canvases and follow-ups are those of its turns. */
    fromTurn?: number;
  }): Promise<Pick<MissionResult, 'canvasSpecIds' | 'followUps'>>;
  /**
   * A session's exchange answered: its result (with the canvases and follow-ups of its turns, from `fromTurn`) stored as
   * exchange number `exchange` (from 1), and the mission `idle`; answers what it gathered.
   */
  completeExchange(input: {
    missionId: string;
    exchange: number;
    fromTurn: number;
    result: MissionResult;
  }): Promise<Pick<MissionResult, 'canvasSpecIds' | 'followUps'>>;
  /** A session's next exchange starts: the user context of its system prompt (profile, memories) read again. */
  continueSession(input: { missionId: string }): Promise<void>;
  /** A session's run continues as new: its events stored, for streams resumed from before the next run's log. */
  storeEvents(input: { missionId: string; events: MissionEvent[] }): Promise<void>;
  /** Paused at the budget after turn `turn`: the row `paused` (its slot free) and `budget.reached` delivered. */
  pauseMission(input: { missionId: string; turn: number }): Promise<void>;
  failMission(input: {
    missionId: string;
    status: Exclude<MissionEndStatus, 'completed'>;
    error: MissionError;
    finalEvents: MissionEvent[];
  }): Promise<void>;
  callModel(input: ModelTurnInput): Promise<ModelTurnResult>;
  /** Folds the older turns of the transcript into a summary the model writes, stored once per cut. */
  compactContext(input: CompactionInput): Promise<CompactionResult>;
  runTool(input: ToolCallInput): Promise<ToolCallResult>;
  /** Feed rows for calls the workflow ended itself (never run, cancelled while waiting, every attempt dead). */
  recordToolEnds(input: { missionId: string; ends: ToolCallEnd[] }): Promise<void>;
  recordApproval(record: ApprovalRecord): Promise<void>;
  prepareFactory(ids: FactoryCallIds): Promise<FactoryPreparation>;
  writeScript(input: FactoryAttemptInput & { previous?: { source: string; error: string } }): Promise<FactoryScript>;
  runFactoryAttempt(input: FactoryAttemptInput & { source: string }): Promise<FactoryRun>;
  /** `plan` is absent when the preparation refused the request. */
  finishFactory(input: FactoryCallIds & { plan?: FactoryPlan; outcome: FactoryOutcome }): Promise<ToolCallResult>;
}

/** Admission's activities: each runs a pass and answers true once the mission holds its slot. */
export interface AdmissionActivities {
  /** A queued mission's own check when no wake-up came for a while. */
  admitMission(input: { missionId: string }): Promise<boolean>;
  /** An idle session a message woke, or a paused mission going on: `running`, or `queued` under running limits. */
  retakeSlot(input: { missionId: string; from: 'idle' | 'paused' }): Promise<boolean>;
  /**
   * A model call's turn at its target's PROVIDER_LIMITS: reserved now (settled by the call with what it used), or the
   * time to wait before asking again; always granted for a target without limits.
   */
  reserveModelCall(input: ProviderTurnInput): Promise<ProviderTurn>;
}
