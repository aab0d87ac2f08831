import { ApplicationFailure } from '@temporalio/activity';
import type { EvalActivities, EvalCase, EvalRunInput } from '../contracts/evals.ts';
import { ConflictError, DomainError, RateLimitedError, UnavailableError } from '../contracts/errors.ts';
import {
  findEvalResult,
  finishEvalRunRow,
  getEvalRun,
  listEvalResults,
  recordEvalGrade,
  recordEvalStart,
  recordNotRun,
} from '../db/evals.ts';
import { getMission } from '../db/missions.ts';
import { getBundleBytes } from '../db/skill-bundles.ts';
import { getSkillVersion } from '../db/skills.ts';
import { awaitMissionEnd } from '../missions/await-mission-end.ts';
import { cancelMission } from '../missions/cancel-mission.ts';
import { startMission, type MissionDeps } from '../missions/start-mission.ts';
import { bundleFiles } from '../skills/bundle.ts';
import { evalStartRequest } from './eval-mission.ts';
import { summarise } from './eval-summary.ts';
import { gradeMission, type GraderDeps } from './grade-mission.ts';

/** Units of a run that run at once: enough to overlap the missions' waits, few enough to leave the owner's slots to others. */
const LANES = 4;

/** The wait's heartbeat: three within its timeout (workflows/eval-run.ts), so a killed worker's waits resume in 15 s. */
const AWAIT_BEAT_MS = 5_000;

/** What the eval run's activities need: the start path of missions, and the grader's model. */
export type EvalDeps = MissionDeps & GraderDeps;

/** The activities of an eval run's workflow (workflows/eval-run.ts), on the missions task queue. */
export function createEvalActivities(deps: EvalDeps): EvalActivities {
  /** The run's row and its version's cases by id. */
  async function load({ evalRunId }: EvalRunInput) {
    const run = await getEvalRun(deps.db, evalRunId);
    const version = await getSkillVersion(deps.db, run.skill_id, run.version);
    const cases = new Map((version?.evals?.cases ?? []).map((c) => [c.id, c]));
    const caseOf = (id: string): EvalCase => {
      const found = cases.get(id);
      if (!found) throw ApplicationFailure.nonRetryable(`eval case ${id} is not in version ${run.version}`, 'EvalCaseMissing');
      return found;
    };
    return { run, version, caseOf };
  }

  return {
    async planEvalRun(input) {
      const { run } = await load(input);
      const units = Array.from({ length: run.repeats }, (_, i) => i + 1).flatMap((repeat) =>
        run.case_ids.flatMap((caseId) => (['candidate', 'baseline'] as const).map((side) => ({ caseId, side, repeat }))),
      );
      return { units, maxCostUsd: run.max_cost_usd, lanes: Math.max(1, Math.min(LANES, units.length)) };
    },

    async startEvalMission({ evalRunId, unit, maxCostUsd }) {
      const recorded = await findEvalResult(deps.db, evalRunId, unit);
      if (recorded?.mission_id) return { missionId: recorded.mission_id };
      const { run, version, caseOf } = await load({ evalRunId });
      // A start that outlived its run's cancel (its attempt was not told) starts nothing.
      if (run.status !== 'running') return { refused: `the eval run is ${run.status}` };
      const evalCase = caseOf(unit.caseId);
      const files =
        evalCase.files.length && version?.bundle_sha256 ? await bundleFiles((await getBundleBytes(deps.db, version.bundle_sha256))!) : [];
      try {
        const owner = { tenantId: run.tenant_id, userId: run.user_id };
        // An unpriced model counts every call 0: no cost budget can bind it (and a mission would refuse one).
        const model = deps.config.model.tiers[version!.spec.tier];
        const cap = Object.hasOwn(deps.config.model.prices, model) ? maxCostUsd : undefined;
        const { row } = await startMission(deps, owner, evalStartRequest(run, unit, evalCase, files, cap));
        await recordEvalStart(deps.db, evalRunId, unit, row.id);
        return { missionId: row.id };
      } catch (err) {
        // Over the owner's start rate, or Temporal away: the retry policy waits; the idempotency key finds a mission started.
        if (err instanceof RateLimitedError || err instanceof UnavailableError || !(err instanceof DomainError)) throw err;
        await recordNotRun(deps.db, evalRunId, [unit], err.message);
        return { refused: err.message };
      }
    },

    async awaitEvalMission({ missionId }) {
      await awaitMissionEnd(deps.temporal, missionId, AWAIT_BEAT_MS);
    },

    async gradeEvalMission({ evalRunId, unit, missionId }) {
      const recorded = await findEvalResult(deps.db, evalRunId, unit);
      // Graded already (a retried attempt, a resumed run): the stored grade stands and the grader is not asked again.
      if (recorded && recorded.status !== 'running')
        return {
          costUsd: recorded.cost_usd ?? 0,
          gradingCostUsd: recorded.grading_cost_usd ?? 0,
          status: recorded.status === 'passed' ? 'passed' : 'failed',
        };
      const { caseOf } = await load({ evalRunId });
      const mission = await getMission(deps.db, missionId);
      const grade = await gradeMission(deps, caseOf(unit.caseId), mission);
      await recordEvalGrade(deps.db, evalRunId, unit, grade);
      return { costUsd: grade.costUsd, gradingCostUsd: grade.gradingCostUsd, status: grade.passed ? 'passed' : 'failed' };
    },

    async finishEvalRun({ evalRunId, status, notRun }) {
      const why = {
        cancelled: 'the eval run was cancelled',
        failed: 'the eval run failed',
        completed: '',
        budget_reached: "the eval run's budget was spent",
      }[status];
      // A run ended early stops the missions it still runs; their units count as not run.
      const running =
        status === 'cancelled' || status === 'failed'
          ? (await listEvalResults(deps.db, evalRunId)).filter((r) => r.status === 'running')
          : [];
      for (const row of running) {
        await cancelMission(deps, await getMission(deps.db, row.mission_id!)).catch((err: unknown) => {
          if (!(err instanceof ConflictError)) throw err;
        });
      }
      const stopped = [...notRun, ...running.map((r) => ({ caseId: r.case_id, side: r.side, repeat: r.repeat }))];
      await recordNotRun(deps.db, evalRunId, stopped, why);
      const run = await getEvalRun(deps.db, evalRunId);
      const summary = summarise(run, await listEvalResults(deps.db, evalRunId));
      await finishEvalRunRow(deps.db, evalRunId, status, summary);
      const { progress, candidate, baseline, delta, grading } = summary;
      const figures = (s: typeof candidate) => ({
        graded: s.graded,
        passed: s.passed,
        passRate: s.passRate,
        costUsd: s.costUsd,
        costPerCaseUsd: s.costPerCaseUsd,
      });
      return {
        figures: { progress, candidate: figures(candidate), baseline: figures(baseline), delta, grading },
        notRun: stopped,
        reason: why,
      };
    },
  };
}
