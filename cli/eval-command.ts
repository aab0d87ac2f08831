import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CliApi, Json } from './api.ts';
import { createEvalTable } from './eval-table.ts';
import { evalRunEvents } from './event-stream.ts';
import { EXIT } from './exit-codes.ts';
import { printObject, printRows } from './output.ts';

const enc = encodeURIComponent;

const against = (value: string) => {
  if (value === 'active' || value === 'none') return value;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('active, none or a version number expected');
  return n;
};
const number = (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a positive number expected');
  return n;
};

/** The case table: each case and repeat, both sides, the first failing expectation and why. */
const caseRows = (r: Json) =>
  r.cases.map((c: Json) => {
    const failing = c.candidate.failing[0] ?? c.baseline.failing[0];
    return {
      case: c.caseId,
      repeat: c.repeat,
      candidate: c.candidate.status,
      baseline: c.baseline.status,
      failing: failing ? `${failing.text}${failing.reason ? ` (${failing.reason})` : ''}` : '',
    };
  });

/**
 * `cadenza skills eval <id> --version N [--against active]`: starts an eval run and follows its event stream (on a
 * terminal the case table redrawn as units finish, otherwise a line per finished unit), then prints the final case
 * table and the figures. Exit status 1 when the candidate did worse than the baseline.
 */
export function addEvalCommand(skills: Command, api: () => CliApi, setExit: (code: number) => void): void {
  skills
    .command('eval')
    .description("run a version's eval cases against a baseline (active version, none or a version) as missions")
    .argument('<id>', 'skill id')
    .requiredOption('--version <n>', 'the version under review', (v) => against(v) as number)
    .option('--against <baseline>', 'active, none or a version number', against)
    .option('--repeats <n>', 'runs of each case on each side', (v) => Math.round(number(v)))
    .option('--max-cost <usd>', 'the eval run budget in USD', number, 5)
    .option('--cases <ids>', 'comma-separated case ids (default: all)')
    .option('--detach', 'start it and print its id without following it')
    .addOption(new Option('--json', 'print JSON for scripts'))
    .action(async (id: string, o) => {
      const body = {
        version: o.version,
        maxCostUsd: o.maxCost,
        ...(o.against !== undefined ? { against: o.against } : {}),
        ...(o.repeats !== undefined ? { repeats: o.repeats } : {}),
        ...(o.cases
          ? {
              cases: String(o.cases)
                .split(',')
                .map((c) => (/^\d+$/.test(c.trim()) ? Number(c) : c.trim())),
            }
          : {}),
      };
      const { evalRunId } = await api().json('POST', `/api/v1/skills/${enc(id)}/evals`, { json: body });
      if (o.detach) return printObject({ evalRunId }, o.json);
      const table = createEvalTable(process.stdout, { tty: !o.json && process.stdout.isTTY });
      for await (const event of evalRunEvents(api(), evalRunId, new AbortController().signal)) if (!o.json) table.event(event);
      table.close();
      const run: Json = await api().json('GET', `/api/v1/eval-runs/${enc(evalRunId)}`);
      if (o.json) printObject(run, true);
      else {
        printRows(caseRows(run), ['case', 'repeat', 'candidate', 'baseline', 'failing'], false);
        printObject(
          {
            evalRun: run.id,
            status: run.status,
            candidate: `${run.candidate.passRate} (${run.candidate.passed}/${run.candidate.graded}, $${run.candidate.costUsd})`,
            baseline: `${run.baselineFigures.passRate} (${run.baselineFigures.passed}/${run.baselineFigures.graded}, $${run.baselineFigures.costUsd})`,
            delta: `${run.delta.passRate} ± ${run.delta.overRepeats.stddev}`,
            grading: `$${run.grading.costUsd}`,
          },
          false,
        );
      }
      setExit(run.delta.passRate < 0 ? EXIT.missionFailed : EXIT.ok);
    });
}
