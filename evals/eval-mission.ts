import type { EvalBaseline, EvalCase, EvalMissionSetup, EvalUnit } from '../contracts/evals.ts';
import type { EvalRunRow } from '../db/eval-tables.ts';
import type { StartMissionRequest } from '../missions/start-mission.ts';
import { decodeUtf8 } from '../skills/bundle.ts';

/** Most characters of one case file put into a mission's context. */
const FILE_CHARS = 20_000;

/** The idempotency key of a unit's mission: a retried start, or a resumed run, finds the mission already started. */
export const evalMissionKey = (evalRunId: string, unit: EvalUnit) => `eval:${evalRunId}/${unit.caseId}/${unit.side}/${unit.repeat}`;

/** The version a side runs and whether its procedure is in the prompt: the baseline `none` runs the candidate's tools without it. */
export function sideSetup(run: Pick<EvalRunRow, 'version'>, baseline: EvalBaseline, unit: EvalUnit, evalCase: EvalCase) {
  const version = unit.side === 'baseline' && baseline.kind === 'version' ? baseline.version : run.version;
  const setup: EvalMissionSetup = { instructions: unit.side === 'candidate' || baseline.kind === 'version', stubs: evalCase.stubs };
  return { version, setup };
}

/** A unit's mission as a start request: the case's prompt, its files as context, a fixed workspace, the budget share. */
export function evalStartRequest(
  run: EvalRunRow,
  unit: EvalUnit,
  evalCase: EvalCase,
  files: ReadonlyArray<{ path: string; data: Uint8Array }>,
  maxCostUsd: number | undefined,
): StartMissionRequest {
  const { version, setup } = sideSetup(run, run.baseline, unit, evalCase);
  const context = evalCase.files.map((path) => {
    const text = decodeUtf8(files.find((f) => f.path === path)?.data ?? new Uint8Array()) ?? '(not text)';
    return `File ${path}:\n${text.length > FILE_CHARS ? `${text.slice(0, FILE_CHARS)}… (cut)` : text}`;
  });
  return {
    skill: run.skill_name,
    objective: evalCase.prompt,
    workspaceCode: evalCase.workspace ?? 'eval',
    ...(context.length > 0 ? { conversationContext: context.join('\n\n') } : {}),
    idempotencyKey: evalMissionKey(run.id, unit),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
    eval: { skillId: run.skill_id, version, setup },
  };
}
