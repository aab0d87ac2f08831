import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import type pg from 'pg';
import type { RecordedRequest } from '../fake-model/fake-model-server.ts';
import { missionWorkflowId } from '../contracts/mission.ts';
import { CLUSTER_SERVICES } from '../testkit/chaos/temporal-cluster.ts';
import { clusterServicePid } from './proc-stats.ts';

const { EventType } = proto.temporal.api.enums.v1;
/** Failed missions explained at most (the rest are counted by the figures). */
const MAX_EXPLAINED = 10;
/** Lines of one source kept per mission. */
const MAX_LINES = 40;

type Ts = { seconds?: unknown; nanos?: number | null } | null | undefined;
const ms = (t: Ts) => (t ? Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6) : undefined);
const iso = (t: Ts) => {
  const m = ms(t);
  return m === undefined ? '-' : new Date(m).toISOString();
};

/**
 * What explains each failed mission of a cluster-scale run, written before the stack is torn down: its activities'
 * events in the workflow's history (scheduled, started — the last attempt's number, the identity of the worker that
 * polled it, the previous attempt's failure — and how each ended, a timeout's last heartbeat details), the requests the
 * fake model server received for it, and the lines that name it in the processes' log and in the Temporal services'
 * logs. Returns the report's path and one line per failed mission.
 */
export async function explainFailedMissions(opts: {
  db: pg.Pool;
  address: string;
  processLogPath: string;
  workers: ReadonlyArray<{ name: string; pids: readonly number[] }>;
  modelRequests: readonly RecordedRequest[];
}): Promise<{ path: string; lines: string[] }> {
  const path = join(dirname(opts.processLogPath), 'failed-missions.txt');
  const failed = await opts.db.query<{ id: string; objective: string; error: unknown; created_at: Date; finished_at: Date | null }>(
    `select id, objective, error, created_at, finished_at from missions where status = 'failed' order by created_at limit ${MAX_EXPLAINED}`,
  );
  if (failed.rows.length === 0) {
    writeFileSync(path, 'no mission failed\n');
    return { path, lines: [] };
  }
  const identities = new Map(opts.workers.flatMap((w) => w.pids.map((pid) => [String(pid), w.name] as const)));
  const connection = await Connection.connect({ address: opts.address });
  const client = new Client({ connection });
  const ids = failed.rows.map((r) => r.id);
  const processLines = await linesNaming(opts.processLogPath, ids);
  const clusterDir = clusterLogDir(opts.address);
  const serviceLines = new Map<string, Map<string, string[]>>();
  for (const service of CLUSTER_SERVICES) {
    const file = clusterDir && join(clusterDir, `${service}.log`);
    if (file && existsSync(file)) serviceLines.set(service, await linesNaming(file, ids));
  }
  const out: string[] = [`processes' log: ${opts.processLogPath}`, `Temporal services' logs: ${clusterDir ?? 'not found'}`, ''];
  const summary: string[] = [];
  try {
    for (const m of failed.rows) {
      const workflowId = missionWorkflowId(m.id);
      out.push(`## ${workflowId} (${m.objective}) created ${m.created_at.toISOString()}, ended ${m.finished_at?.toISOString() ?? '-'}`);
      out.push(`error: ${JSON.stringify(m.error)}`);
      const events = await activityEvents(client, workflowId, identities).catch((err: unknown) => [`history not read: ${String(err)}`]);
      out.push('### activity events', ...events);
      const asked = opts.modelRequests.filter((q) =>
        JSON.stringify((q.body as { messages?: unknown[] })?.messages?.[0] ?? '').includes(m.objective),
      );
      out.push(`### fake model requests for it: ${asked.length}`);
      for (const q of asked)
        out.push(
          `received ${new Date(q.receivedAt).toISOString()}, answered ${q.finishedAt ? new Date(q.finishedAt).toISOString() : '-'}` +
            `${q.aborted ? ' (aborted by the client)' : ''}, ${(q.body as { messages?: unknown[] })?.messages?.length ?? 0} messages`,
        );
      const own = processLines.get(m.id) ?? [];
      out.push(`### processes' log lines naming it: ${own.length}`, ...own.slice(0, MAX_LINES));
      for (const [service, byId] of serviceLines) {
        const lines = byId.get(m.id) ?? [];
        out.push(
          `### ${service} service log lines naming it: ${lines.length} (${countByMsg(lines)})`,
          ...lines.slice(0, MAX_LINES).map(trimmed),
        );
      }
      out.push('');
      summary.push(`${workflowId}: ${events.filter((e) => / (started|timed out|failed) /.test(e)).join(' | ')}`);
    }
  } finally {
    await connection.close();
  }
  writeFileSync(path, out.join('\n') + '\n');
  return { path, lines: summary };
}

/**
 * The attempts after the first that workers started, by activity and attempt number (from the workers' `activity
 * attempt started` lines), and how many of those calls' previous attempt no worker started: an attempt the server
 * recorded as started whose task no worker received.
 */
export async function retriedAttempts(processLogPath: string): Promise<string> {
  const started = new Map<string, Set<number>>();
  for await (const line of createInterface({ input: createReadStream(processLogPath) })) {
    if (!line.includes('"activity attempt started"')) continue;
    const { activityType, workflowId, activityId, attempt } = JSON.parse(line.slice(line.indexOf(' ') + 1)) as Record<string, string>;
    const key = `${activityType} ${workflowId} ${activityId}`;
    started.set(key, (started.get(key) ?? new Set()).add(Number(attempt)));
  }
  const counts = new Map<string, { n: number; unseenBefore: number }>();
  for (const [key, attempts] of started)
    for (const attempt of attempts) {
      const label = `${key.split(' ')[0]} #${attempt}`;
      const c = counts.get(label) ?? { n: 0, unseenBefore: 0 };
      c.n++;
      if (attempt > 2 && !attempts.has(attempt - 1)) c.unseenBefore++;
      counts.set(label, c);
    }
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([label, c]) => `${label}: ${c.n}${c.unseenBefore ? ` (${c.unseenBefore} whose attempt before reached no worker)` : ''}`)
    .join(' · ');
}

/** One line per activity event of the workflow's history. */
async function activityEvents(client: Client, workflowId: string, identities: Map<string, string>): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const types = new Map<number, string>();
  const worker = (identity: string | null | undefined) => `${identity ?? '-'} (${identities.get((identity ?? '').split('@')[0]!) ?? '?'})`;
  const lines: string[] = [];
  for (const e of history.events ?? []) {
    const id = Number(e.eventId);
    const at = iso(e.eventTime as Ts);
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      const a = e.activityTaskScheduledEventAttributes!;
      types.set(id, `${a.activityType?.name} ${a.activityId}`);
      lines.push(`${id} ${at} scheduled ${a.activityType?.name} (activity ${a.activityId}, queue ${a.taskQueue?.name})`);
    } else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      const a = e.activityTaskStartedEventAttributes!;
      const last = a.lastFailure ? `; previous attempt: ${a.lastFailure.message}` : '';
      lines.push(`${id} ${at} started ${types.get(Number(a.scheduledEventId))} attempt ${a.attempt} by ${worker(a.identity)}${last}`);
    } else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT) {
      const a = e.activityTaskTimedOutEventAttributes!;
      const details = a.failure?.timeoutFailureInfo?.lastHeartbeatDetails?.payloads?.length ?? 0;
      lines.push(
        `${id} ${at} timed out ${types.get(Number(a.scheduledEventId))}: ${a.failure?.message} (retry state ${a.retryState}, ${details} heartbeat details)`,
      );
    } else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED) {
      const a = e.activityTaskFailedEventAttributes!;
      lines.push(`${id} ${at} failed ${types.get(Number(a.scheduledEventId))}: ${a.failure?.message} by ${worker(a.identity)}`);
    } else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const a = e.activityTaskCompletedEventAttributes!;
      lines.push(`${id} ${at} completed ${types.get(Number(a.scheduledEventId))} by ${worker(a.identity)}`);
    }
  }
  return lines;
}

/** The lines of `file` that name each of `ids`, by id. */
async function linesNaming(file: string, ids: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>(ids.map((id) => [id, []]));
  for await (const line of createInterface({ input: createReadStream(file) }))
    for (const id of ids) if (line.includes(id)) found.get(id)!.push(line);
  return found;
}

/** The cluster's directory (its services' logs), from the history service's `--root`. */
function clusterLogDir(address: string): string | undefined {
  const pid = clusterServicePid(address, 'history');
  if (!pid) return undefined;
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return args[args.indexOf('--root') + 1];
}

function countByMsg(lines: string[]): string {
  const counts = new Map<string, number>();
  for (const l of lines) {
    const msg = /"msg":"([^"]*)"/.exec(l)?.[1] ?? '?';
    counts.set(msg, (counts.get(msg) ?? 0) + 1);
  }
  return [...counts].map(([msg, n]) => `${n} × ${msg}`).join('; ');
}

/**
 * A Temporal log line in short: its time, message, task type and history event, error, and the history API whose
 * write failed (from the stack trace: `recordactivitytaskstarted` is a dispatch being recorded as started).
 */
function trimmed(line: string): string {
  try {
    const f = JSON.parse(line) as Record<string, unknown>;
    const api = /service\/history\/api\/(\w+)\.Invoke/.exec(String(f.stacktrace ?? ''))?.[1];
    const event = f['wf-history-event-id'] === undefined ? '' : ` event ${String(f['wf-history-event-id'])}`;
    return `${String(f.ts)} ${String(f.msg)} ${String(f['queue-task-type'] ?? '')}${event}: ${String(f.error ?? '')}${api ? ` (${api})` : ''}`;
  } catch {
    return line.slice(0, 700);
  }
}
