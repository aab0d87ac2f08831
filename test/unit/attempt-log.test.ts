import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import type { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, Next, ActivityInboundCallsInterceptor } from '@temporalio/worker';
import { beat } from '../../activities/checkpoint.ts';
import { createLogger } from '../../lib/logger.ts';
import { SILENT_LOG_MS, createAttemptLogInterceptor } from '../../worker/attempt-log.ts';

/** An attempt as the worker's interceptor sees it: its info, and heartbeats that go nowhere. */
const attempt = (activityId: string, attemptNo = 1) =>
  ({
    info: {
      activityType: 'runTool',
      activityId,
      attempt: attemptNo,
      workflowExecution: { workflowId: `mission-${activityId}` },
      currentAttemptScheduledTimestampMs: Date.now(),
    },
    heartbeat: () => {},
  }) as unknown as Context;

test('an attempt silent for SILENT_LOG_MS is logged once; one that beats, and one that ended, are not', async () => {
  mock.timers.enable({ apis: ['setInterval', 'Date'] });
  try {
    const lines: Array<{ msg: string; activityId: string; silentMs?: number }> = [];
    const interceptor = createAttemptLogInterceptor(createLogger({ write: (line) => lines.push(JSON.parse(line)) }));
    const run = (ctx: Context) => {
      let end!: () => void;
      const running = new Promise<void>((resolve) => (end = resolve));
      const inbound = interceptor(ctx).inbound as ActivityInboundCallsInterceptor;
      const next: Next<ActivityInboundCallsInterceptor, 'execute'> = () => running;
      const done = inbound.execute!({ args: [], headers: {} } as ActivityExecuteInput, next);
      return { end, done };
    };
    const silent = run(attempt('silent'));
    const beating = attempt('beating');
    const beats = run(beating);
    const ended = run(attempt('ended'));
    ended.end();
    await ended.done;

    for (let ms = 0; ms < 3 * SILENT_LOG_MS; ms += 5_000) {
      beat(beating);
      mock.timers.tick(5_000);
    }
    const warned = lines.filter((l) => l.msg === 'activity attempt silent');
    assert.deepEqual(
      warned.map((l) => l.activityId),
      ['silent'],
    );
    assert.ok(warned[0]!.silentMs! >= SILENT_LOG_MS);

    silent.end();
    beats.end();
    await Promise.all([silent.done, beats.done]);
  } finally {
    mock.timers.reset();
  }
});

test('a retried attempt logs its start, with how long it waited for a worker', async () => {
  const lines: Array<{ msg: string; attempt: number; queuedMs?: number }> = [];
  const interceptor = createAttemptLogInterceptor(createLogger({ write: (line) => lines.push(JSON.parse(line)) }));
  const next = async () => 'answer';
  for (const [id, n] of [
    ['first', 1],
    ['retried', 2],
  ] as const) {
    const inbound = interceptor(attempt(id, n)).inbound as ActivityInboundCallsInterceptor;
    assert.equal(await inbound.execute!({ args: [], headers: {} } as ActivityExecuteInput, next), 'answer');
  }
  assert.deepEqual(
    lines.filter((l) => l.msg === 'activity attempt started').map((l) => l.attempt),
    [2],
  );
});
