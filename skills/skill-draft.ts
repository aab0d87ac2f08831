import { stringify } from 'yaml';

/** One tool call of a finished run, as the draft describes it. */
export type RunCall = { turn: number; toolUseId: string; tool: string; status: string; attempt: number; input: unknown; error?: string };

/** What a draft is written from: the run's identity and objective, and its tool calls in order. */
export type FinishedRun = {
  missionId: string;
  skillName: string;
  skillVersion: number;
  objective: string;
  calls: RunCall[];
};

const MAX_INPUT_CHARS = 200;
const MAX_ERROR_CHARS = 160;

/**
 * A SKILL.md drafted from a completed run: the objective, then the run's tool calls as an ordered, editable
 * procedure (one step per turn; calls of one turn ran in parallel; failures and the step that retried them are
 * said), and `allowed-tools` as the caller gives it (the tools the run used).
 */
export function draftSkillMd(run: FinishedRun, skill: { name: string; description: string; allowedTools: string[] }): string {
  const appTools = skill.allowedTools;
  const frontmatter: Record<string, string> = { name: skill.name, description: skill.description };
  if (appTools.length > 0) frontmatter['allowed-tools'] = appTools.join(' ');
  const turns = [...new Set(run.calls.map((c) => c.turn))].sort((a, b) => a - b);
  const stepOfTurn = new Map(turns.map((t, i) => [t, i + 1]));
  const lines = [
    '---',
    stringify(frontmatter, { lineWidth: 0 }).trimEnd(),
    '---',
    `# ${skill.name}`,
    '',
    `Drafted from mission ${run.missionId} (skill ${run.skillName}, version ${run.skillVersion}). Edit the steps to make`,
    'the procedure general: inputs below are what that run used.',
    '',
    '## Objective of the original run',
    '',
    run.objective.trim(),
    '',
    '## Procedure',
    '',
  ];
  if (turns.length === 0) lines.push('1. Answer from what you know; the original run called no tools.');
  for (const turn of turns) {
    const calls = run.calls.filter((c) => c.turn === turn);
    const step = stepOfTurn.get(turn)!;
    const describe = (c: RunCall) => `\`${c.tool}\` with ${inputText(c.input)}${outcomeText(c, run.calls, stepOfTurn)}`;
    if (calls.length === 1) lines.push(`${step}. Call ${describe(calls[0]!)}.`);
    else {
      lines.push(`${step}. Call these ${calls.length} tools in parallel:`);
      for (const c of calls) lines.push(`   - ${describe(c)}`);
    }
  }
  lines.push(`${turns.length + 1}. Answer the objective from the results.`, '');
  return lines.join('\n');
}

function inputText(input: unknown): string {
  const text = JSON.stringify(input ?? {});
  return `\`${text.length > MAX_INPUT_CHARS ? `${text.slice(0, MAX_INPUT_CHARS)}…` : text}\``;
}

/** What became of a call: failed (and the later step that called the same tool again), cancelled, denied, or retried. */
function outcomeText(c: RunCall, all: RunCall[], stepOfTurn: Map<number, number>): string {
  const again = all.find((o) => o.tool === c.tool && o.turn > c.turn);
  const retriedIn = again ? `; step ${stepOfTurn.get(again.turn)} called it again` : '';
  if (c.status === 'error') {
    const why = c.error ? `: ${c.error.replace(/\s+/g, ' ').slice(0, MAX_ERROR_CHARS)}` : '';
    return ` (it failed${why}${retriedIn})`;
  }
  if (c.status === 'cancelled') return ` (cancelled by the user${retriedIn})`;
  if (c.status === 'denied') return ` (denied: a person did not approve it${retriedIn})`;
  if (c.attempt > 1) return ` (succeeded on attempt ${c.attempt})`;
  return '';
}
