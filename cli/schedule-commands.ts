import { Option, type Command } from 'commander';
import type { CliApi, Json } from './api.ts';
import { printObject, printRows } from './output.ts';

const json = () => new Option('--json', 'print JSON for scripts');
const enc = encodeURIComponent;
const timing = (s: Json) => `${s.spec.cron ?? `every ${s.spec.every}`} (${s.spec.timezone})`;

/** `cadenza schedules …`: recurring missions, through the public API like every other command. */
export function addScheduleCommands(program: Command, api: () => CliApi): void {
  const schedules = program.command('schedules').description('list, create, show, pause, unpause, trigger and delete schedules');
  schedules
    .command('list')
    .description('your schedules, newest first')
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .addOption(json())
    .action(async (o) => {
      const page = await api().json('GET', `/api/v1/schedules${o.cursor ? `?cursor=${enc(o.cursor)}` : ''}`);
      const rows = page.items.map((s: Json) => ({ ...s, timing: timing(s) }));
      printRows(rows, ['id', 'skill', 'timing', 'overlap', 'objective'], o.json, page);
      if (!o.json && page.nextCursor) process.stdout.write(`more: --cursor ${page.nextCursor}\n`);
    });
  schedules
    .command('create')
    .description('start a mission on a cron expression or an interval')
    .argument('<skill>', 'skill name')
    .argument('<objective>', 'what each run should achieve')
    .option('--cron <expr>', 'five-field cron, e.g. "0 9 * * 1-5"')
    .option('--every <duration>', 'an interval: 30s, 15m, 1h, 7d')
    .option('--timezone <zone>', 'IANA time zone of the cron (default UTC)')
    .option('--overlap <policy>', 'skip, buffer_one or allow_all (default skip)')
    .option('-w, --workspace <code>', 'workspace code', process.env.CADENZA_WORKSPACE ?? 'default')
    .option('--paused', 'create it paused')
    .addOption(json())
    .action(async (skill: string, objective: string, o) => {
      const body = {
        skill,
        objective,
        workspaceCode: o.workspace,
        ...(o.cron ? { cron: o.cron } : {}),
        ...(o.every ? { every: o.every } : {}),
        ...(o.timezone ? { timezone: o.timezone } : {}),
        ...(o.overlap ? { overlap: o.overlap } : {}),
        ...(o.paused ? { paused: true } : {}),
      };
      const s = await api().json('POST', '/api/v1/schedules', { json: body });
      printObject(o.json ? s : { id: s.id, skill: s.skill, timing: timing(s), overlap: s.overlap }, o.json);
    });
  schedules
    .command('get')
    .description('a schedule: timing, next runs, recent runs and their missions')
    .argument('<id>', 'schedule id')
    .addOption(json())
    .action(async (id: string, o) => {
      const s = await api().json('GET', `/api/v1/schedules/${enc(id)}`);
      if (o.json) return printObject(s, true);
      printObject(
        { id: s.id, skill: s.skill, objective: s.objective, timing: timing(s), paused: s.paused, next: s.nextRunTimes[0] },
        false,
      );
      printRows(s.runs, ['scheduledAt', 'outcome', 'missionId', 'reason'], false);
    });
  for (const act of ['pause', 'unpause', 'trigger'] as const) {
    schedules
      .command(act)
      .description({ pause: 'pause a schedule', unpause: 'resume a paused schedule', trigger: 'run a schedule now' }[act])
      .argument('<id>', 'schedule id')
      .addOption(json())
      .action(async (id: string, o) => printObject(await api().json('POST', `/api/v1/schedules/${enc(id)}/${act}`), o.json));
  }
  schedules
    .command('delete')
    .description('delete a schedule (its missions stay)')
    .argument('<id>', 'schedule id')
    .addOption(json())
    .action(async (id: string, o) => {
      await api().json('DELETE', `/api/v1/schedules/${enc(id)}`);
      printObject({ id, status: 'deleted' }, o.json);
    });
}
