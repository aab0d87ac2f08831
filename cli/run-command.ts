import type { CliApi } from './api.ts';
import { missionEvents } from './event-stream.ts';
import { EXIT } from './exit-codes.ts';
import { printMissionResult } from './output.ts';
import { createProgressView } from './progress-view.ts';

export type RunOptions = { workspace: string; maxTurns?: number; idempotencyKey?: string; json?: boolean; detach?: boolean };

const STATUS_EXIT: Record<string, number> = { completed: EXIT.ok, failed: EXIT.missionFailed, cancelled: EXIT.missionCancelled };

/**
 * `cadenza run`: starts a mission and follows it to its end with live progress. Ctrl-C asks whether to cancel the
 * mission or detach from it (on a terminal; elsewhere it detaches). Returns the exit status.
 */
export async function runMission(api: CliApi, skill: string, objective: string, opts: RunOptions): Promise<number> {
  const started = await api.json('POST', '/api/v1/missions', {
    json: {
      skill,
      objective,
      workspaceCode: opts.workspace,
      ...(opts.maxTurns !== undefined ? { maxTurns: opts.maxTurns } : {}),
      ...(opts.idempotencyKey !== undefined ? { idempotencyKey: opts.idempotencyKey } : {}),
    },
  });
  const id = String(started.id);
  if (opts.detach) {
    process.stdout.write(opts.json ? `${JSON.stringify(started)}\n` : `${id}\n`);
    return EXIT.ok;
  }
  const tty = Boolean(process.stdout.isTTY) && !opts.json;
  const view = createProgressView(process.stdout, { tty, missionId: id });
  if (!opts.json) view.line(`mission ${id} · ${skill} · follow elsewhere with: cadenza missions show ${id}`);

  const ac = new AbortController();
  let detached = false;
  const detach = () => {
    detached = true;
    ac.abort();
  };
  const stopKeys = tty && process.stdin.isTTY ? listenForCtrlC(api, id, view, detach) : onSigint(detach);
  try {
    for await (const event of missionEvents(api, id, ac.signal)) if (!opts.json) view.event(event);
  } finally {
    stopKeys();
    view.stop();
  }
  if (detached) {
    process.stderr.write(`detached: mission ${id} keeps running (cadenza missions show ${id}, cadenza missions cancel ${id})\n`);
    return EXIT.detached;
  }
  const mission = await api.json('GET', `/api/v1/missions/${id}`);
  if (opts.json) process.stdout.write(`${JSON.stringify(mission, null, 2)}\n`);
  else printMissionResult(mission, { alreadyShown: view.streamedText() });
  return STATUS_EXIT[String(mission.status)] ?? EXIT.missionFailed;
}

/** Without a terminal to ask on, Ctrl-C detaches. */
function onSigint(detach: () => void): () => void {
  process.once('SIGINT', detach);
  return () => process.off('SIGINT', detach);
}

/**
 * Reads keys in raw mode: Ctrl-C pauses the view and asks; `c` cancels the mission (the view follows it to its
 * cancelled end), `d` or a second Ctrl-C detaches, any other key keeps watching.
 */
function listenForCtrlC(api: CliApi, id: string, view: ReturnType<typeof createProgressView>, detach: () => void): () => void {
  const stdin = process.stdin;
  let asking = false;
  const onData = (chunk: Buffer) => {
    const key = chunk.toString('utf8');
    if (!asking) {
      if (!key.includes('\u0003')) return;
      asking = true;
      view.pause();
      process.stdout.write('Ctrl-C: [c] cancel the mission, [d] detach (it keeps running), any other key: keep watching ');
      return;
    }
    asking = false;
    process.stdout.write('\n');
    if (key === 'c' || key === 'C') {
      view.line(`cancelling mission ${id}…`);
      api.json('POST', `/api/v1/missions/${id}/cancel`).catch((err: Error) => view.line(`cancel failed: ${err.message}`));
    } else if (key === 'd' || key === 'D' || key.includes('\u0003')) {
      return detach();
    }
    view.resume();
  };
  stdin.setRawMode(true);
  stdin.resume();
  stdin.on('data', onData);
  return () => {
    stdin.off('data', onData);
    stdin.setRawMode(false);
    stdin.pause();
  };
}
