import { createInterface } from 'node:readline';
import type { CliApi } from './api.ts';
import { missionEvents } from './event-stream.ts';
import { EXIT } from './exit-codes.ts';
import { printMissionResult } from './output.ts';
import { createProgressView } from './progress-view.ts';

export type ChatOptions = { workspace: string; maxTurns?: number };

const STATUS_EXIT: Record<string, number> = { completed: EXIT.ok, failed: EXIT.missionFailed, cancelled: EXIT.missionCancelled };

/**
 * `cadenza chat`: starts a session (its objective the argument, or the first line typed) and talks to it. Each line typed is a message: the next exchange when the session
 * is idle, queued for the next turn while it works. Ctrl-C while it works makes the next line an interrupt (the model
 * call and the running tools stopped, a new turn started with it); Ctrl-C at the prompt, a second Ctrl-C, or the end
 * of input (Ctrl-D) closes the session. Returns the exit status of its end.
 */
export async function chat(api: CliApi, skill: string, given: string | undefined, opts: ChatOptions): Promise<number> {
  const input = createInterface({ input: process.stdin, terminal: false });
  // Without an objective on the command line, the first line typed is it.
  if (given === undefined) process.stdout.write(`${skill}> `);
  const objective = given ?? (await firstLine(input));
  if (objective === undefined) {
    input.close();
    return EXIT.ok;
  }
  const started = await api.json('POST', '/api/v1/missions', {
    json: {
      skill,
      objective,
      workspaceCode: opts.workspace,
      session: true,
      ...(opts.maxTurns !== undefined ? { maxTurns: opts.maxTurns } : {}),
    },
  });
  const id = String(started.id);
  const tty = Boolean(process.stdout.isTTY);
  const view = createProgressView(process.stdout, { tty, missionId: id });
  view.line(`session ${id} · ${skill} · Enter sends a message, Ctrl-C interrupts, Ctrl-D ends the session`);

  let idle = false;
  let interruptNext = false;
  let closing = false;
  let lastAnswer = '';
  const post = (path: string, json?: object) =>
    api
      .json('POST', `/api/v1/missions/${id}/${path}`, json ? { json } : {})
      .catch((err: unknown) => view.line(`✗ ${err instanceof Error ? err.message : String(err)}`));
  const close = () => {
    if (closing) return;
    closing = true;
    view.line('closing the session…');
    void post('close');
  };
  const onCtrlC = () => {
    if (closing) return;
    if (idle || interruptNext) return close();
    interruptNext = true;
    view.line('interrupt: type the message that starts the next turn now (Ctrl-C again ends the session)');
  };

  input.on('line', (text) => {
    if (closing || text.trim() === '') return;
    const mode = interruptNext ? 'interrupt' : 'queue';
    interruptNext = false;
    idle = false;
    void post('messages', { text, mode, ...(mode === 'interrupt' ? { cancelTools: true } : {}) });
  });
  input.on('close', close);
  // The handler stays for the life of the command (it exits as soon as the stream ends): once the session is closing,
  // a Ctrl-C is a no-op rather than a kill that would turn the session's exit status into 130.
  process.on('SIGINT', onCtrlC);
  const ac = new AbortController();
  try {
    for await (const event of missionEvents(api, id, ac.signal)) {
      view.event(event);
      if (event.type !== 'status') continue;
      idle = event.data.status === 'idle';
      if (!idle) continue;
      const { result } = await api.json('GET', `/api/v1/missions/${id}`);
      lastAnswer = String(result?.text ?? '');
      if (lastAnswer.trim() !== view.streamedText().trim()) view.line(`\n${lastAnswer}`);
      view.line(closing ? '' : '\x1b[2m(your turn: type a message)\x1b[0m');
    }
  } finally {
    closing = true;
    input.removeListener('close', close);
    input.close();
    view.stop();
  }
  const mission = await api.json('GET', `/api/v1/missions/${id}`);
  printMissionResult(mission, { alreadyShown: lastAnswer });
  return STATUS_EXIT[String(mission.status)] ?? EXIT.missionFailed;
}

/** The first non-blank line of `input`; undefined at the end of input. */
function firstLine(input: ReturnType<typeof createInterface>): Promise<string | undefined> {
  return new Promise((ok) => {
    const onLine = (text: string) => {
      if (text.trim() === '') return;
      input.off('line', onLine);
      input.off('close', onEnd);
      ok(text);
    };
    const onEnd = () => ok(undefined);
    input.on('line', onLine);
    input.once('close', onEnd);
  });
}
