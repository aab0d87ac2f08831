import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Context, ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { eventsQuery } from '../../contracts/events.ts';
import { cancelToolUpdate, stateQuery, type ToolCallInput, type ToolCallResult } from '../../contracts/mission.ts';
import { answer, plan, startWorkflowHarness, toolTurn, until, type MissionRun } from './workflow-harness.ts';

const EventType = proto.temporal.api.enums.v1.EventType;

/** A tool that runs until it is cancelled, heartbeating so that the cancel reaches it. */
async function hangUntilCancelled(): Promise<ToolCallResult> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), 100);
  try {
    return await ctx.cancelled;
  } finally {
    clearInterval(timer);
  }
}
const done = (): ToolCallResult => ({ status: 'completed', durationMs: 1 });
const byTool = (tools: Record<string, () => ToolCallResult | Promise<ToolCallResult>>) => (input: ToolCallInput) =>
  tools[input.qualifiedName]!();
const eventTypes = async (m: MissionRun) => (await m.handle.fetchHistory()).events!.map((e) => e.eventType);

describe('the mission workflow, branch by branch, with stub activities', () => {
  let harness: Awaited<ReturnType<typeof startWorkflowHarness>>;
  before(async () => {
    harness = await startWorkflowHarness();
  });
  after(() => harness.teardown());

  it('a spent token budget makes the next call the forced final one, and the tools it asked for never run', async () => {
    await harness.run(
      {
        plan: plan({ budget: { maxTokens: 150 } }),
        model: (i) => (i.final ? answer('within budget') : toolTurn(['tu_1', 'lab__lookup'])),
        tool: done,
      },
      async (m) => {
        const result = await m.handle.result();
        assert.equal(result.stoppedBy, 'budget');
        assert.equal(result.text, 'within budget');
        assert.deepEqual(m.calls.tools, []);
        assert.deepEqual(
          m.calls.model.map((c) => [c.turn, c.final, c.finalReason]),
          [
            [1, false, undefined],
            [2, true, 'budget'],
          ],
        );
      },
    );
  });

  it('the turn cap ends the loop with a final call without tools, fed the last turn’s results', async () => {
    await harness.run(
      { plan: plan({ maxTurns: 2 }), model: (i) => (i.final ? answer('capped') : toolTurn(['tu_1', 'lab__lookup'])), tool: done },
      async (m) => {
        const result = await m.handle.result();
        assert.equal(result.stoppedBy, 'turn_budget');
        assert.equal(result.metrics.turns, 3);
        assert.equal(m.calls.tools.length, 2);
        const last = m.calls.model.at(-1)!;
        assert.deepEqual([last.turn, last.final, last.finalReason], [3, true, 'turn_budget']);
        assert.deepEqual(last.previous, [{ toolUseId: 'tu_1', status: 'completed' }]);
      },
    );
  });

  it('a reply cut off at max_tokens ends the mission with its text, and its tool call is never run', async () => {
    const cut = { ...toolTurn(['tu_1', 'lab__lookup']), stopReason: 'max_tokens' as const, text: 'so far' };
    await harness.run({ model: () => cut, tool: done }, async (m) => {
      const result = await m.handle.result();
      assert.deepEqual([result.stoppedBy, result.text], ['max_tokens', 'so far']);
      assert.deepEqual(m.calls.tools, []);
    });
  });

  it('the cancel update cancels one running call; unknown and finished calls are refused and leave no history', async () => {
    await harness.run(
      {
        model: (i) => (i.turn > 1 ? answer('went on') : toolTurn(['tu_s', 'lab__scan'], ['tu_l', 'lab__lookup'])),
        tool: byTool({ 'lab.scan': hangUntilCancelled, 'lab.lookup': done }),
      },
      async (m) => {
        const status = async (id: string) => (await m.handle.query(stateQuery)).tools.find((t) => t.toolUseId === id)?.status;
        await until(async () => (await status('tu_l')) === 'completed' && (await status('tu_s')) === 'running');
        const refusal = async (id: string) => {
          const err = await m.handle.executeUpdate(cancelToolUpdate, { args: [id] }).then(
            () => assert.fail(`the cancel of ${id} was accepted`),
            (e: unknown) => e,
          );
          assert.ok(err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure);
          return [err.cause.type, err.cause.message];
        };
        assert.deepEqual(await refusal('tu_nope'), ['ToolCallNotFound', 'no tool call tu_nope']);
        assert.deepEqual(await refusal('tu_l'), ['ToolCallFinished', 'tool call already completed']);
        const embedId = (await m.handle.query(stateQuery)).tools.find((t) => t.toolUseId === 'tu_s')!.embedId;
        assert.match(embedId!, /^[0-9a-f-]{36}$/, 'each call has its embed id');
        assert.deepEqual(await m.handle.executeUpdate(cancelToolUpdate, { args: ['tu_s'] }), {
          toolUseId: 'tu_s',
          embedId,
          status: 'cancelling',
        });
        assert.equal((await m.handle.result()).text, 'went on');
        assert.deepEqual(m.calls.model[1]!.previous, [
          { toolUseId: 'tu_s', status: 'cancelled' },
          { toolUseId: 'tu_l', status: 'completed' },
        ]);
        const updates = (await eventTypes(m)).filter((t) => t === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
        assert.equal(updates.length, 1, 'only the accepted update is in the history');
      },
    );
  });

  it('a whole-mission cancel ends every running call as cancelled, on the state, the events (before the end) and the feed', async () => {
    await harness.run({ model: () => toolTurn(['tu_a', 'lab__scan'], ['tu_b', 'lab__scan']), tool: hangUntilCancelled }, async (m) => {
      await until(() => m.calls.tools.length === 2);
      await m.handle.cancel();
      await assert.rejects(m.handle.result(), WorkflowFailedError);
      const state = await m.handle.query(stateQuery);
      assert.equal(state.status, 'cancelled');
      assert.deepEqual(
        state.tools.map((t) => [t.toolUseId, t.status]),
        [
          ['tu_a', 'cancelled'],
          ['tu_b', 'cancelled'],
        ],
      );
      const events = (await m.handle.query(eventsQuery, 0)).events.map((e) =>
        e.type === 'tool_end' || e.type === 'embed'
          ? `${e.type}:${e.toolUseId}:${e.status}`
          : e.type === 'status'
            ? `status:${e.status}`
            : e.type,
      );
      assert.deepEqual(events.slice(-6), [
        'tool_end:tu_a:cancelled',
        'embed:tu_a:cancelled',
        'tool_end:tu_b:cancelled',
        'embed:tu_b:cancelled',
        'error',
        'status:cancelled',
      ]);
      assert.ok(
        m.calls.ends.every((e) => e.embedId !== undefined),
        'the workflow ends each call’s embed too',
      );
      assert.deepEqual(m.calls.ends.map((e) => [e.toolUseId, e.status, e.turn]).sort(), [
        ['tu_a', 'cancelled', 1],
        ['tu_b', 'cancelled', 1],
      ]);
      const log = (await m.handle.query(eventsQuery, 0)).events;
      assert.deepEqual(m.calls.failed, [
        {
          missionId: m.missionId,
          status: 'cancelled',
          error: { phase: 'tool', message: 'mission cancelled' },
          finalEvents: log.slice(-2),
        },
      ]);
      assert.deepEqual(
        log.slice(-2).map((e) => e.type),
        ['error', 'status'],
        'the recorded end carries the very events the log ends with',
      );
    });
  });

  it('a tool activity that fails for good becomes an error result the model sees, and its feed end is written', async () => {
    const missing = () => {
      throw ApplicationFailure.nonRetryable('tool lab.scan is not installed', 'ToolMissing');
    };
    await harness.run({ model: (i) => (i.turn > 1 ? answer('coped') : toolTurn(['tu_x', 'lab__scan'])), tool: missing }, async (m) => {
      assert.equal((await m.handle.result()).text, 'coped');
      assert.deepEqual(m.calls.model[1]!.previous, [{ toolUseId: 'tu_x', status: 'error', error: 'tool lab.scan is not installed' }]);
      assert.deepEqual(
        m.calls.ends.map((e) => [e.toolUseId, e.status, e.error]),
        [['tu_x', 'error', 'tool lab.scan is not installed']],
      );
    });
  });

  it('an activity failure ends the mission as failed, recorded once', async () => {
    const refused = () => {
      throw ApplicationFailure.nonRetryable('model said no', 'Model.invalid_request');
    };
    await harness.run({ model: refused }, async (m) => {
      await assert.rejects(m.handle.result(), WorkflowFailedError);
      const log = (await m.handle.query(eventsQuery, 0)).events;
      assert.deepEqual(m.calls.failed, [
        { missionId: m.missionId, status: 'failed', error: { phase: 'model', message: 'model said no' }, finalEvents: log.slice(-2) },
      ]);
      assert.deepEqual(
        log.slice(-2).map((e) => (e.type === 'status' ? `status:${e.status}` : e.type)),
        ['error', 'status:failed'],
      );
      assert.equal((await m.handle.describe()).status.name, 'FAILED');
    });
  });

  it('a bug in workflow code fails the workflow task (retried after a fix), not the mission', async () => {
    // A reply whose shape the workflow does not expect makes its code throw a TypeError.
    const malformed = () => ({ ...toolTurn(), toolUses: null as never });
    await harness.run({ model: malformed }, async (m) => {
      await until(async () => (await eventTypes(m)).includes(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED));
      const failedTask = (await m.handle.fetchHistory()).events!.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)!;
      assert.match(failedTask.workflowTaskFailedEventAttributes!.failure!.message!, /TypeError|Cannot read properties of null/);
      assert.equal((await m.handle.describe()).status.name, 'RUNNING', 'the run stays open for a fixed worker');
      assert.deepEqual(m.calls.failed, [], 'the mission was not recorded as failed');
      await m.handle.terminate('test over');
    });
  });
  it('a retry resumes at its turn with the previous outcomes, says so first, and its budget counts the first run', async () => {
    const resume = {
      retryOf: 'the-failed-mission',
      turn: 3,
      previous: [{ toolUseId: 'tu_2', status: 'completed' as const }],
      spent: { toolCalls: 2, inputTokens: 200, outputTokens: 20, costUsd: 0.25 },
    };
    await harness.run(
      {
        resume,
        plan: plan({ maxTurns: 6, budget: { maxTokens: 300 } }),
        model: (i) => (i.final ? answer('out of budget') : toolTurn(['tu_3', 'lab__lookup'])),
        tool: done,
      },
      async (m) => {
        const result = await m.handle.result();
        // 220 carried + 110 for turn 3, and the next call as large: past 300, so turn 3's tools never run.
        assert.equal(result.stoppedBy, 'budget');
        assert.deepEqual(m.calls.tools, []);
        assert.deepEqual(
          m.calls.model.map((c) => [c.turn, c.final, c.previous]),
          [
            [3, false, resume.previous],
            [4, true, []],
          ],
        );
        assert.deepEqual(
          { ...result.metrics, elapsedMs: 0 },
          { turns: 4, toolCalls: 2, inputTokens: 400, outputTokens: 40, elapsedMs: 0, costUsd: 0.25 },
        );
        const { events } = await m.handle.query(eventsQuery, 0);
        assert.deepEqual(events[0], {
          ...events[0],
          type: 'status',
          status: 'running',
          resumed: { retryOf: 'the-failed-mission', turn: 3 },
        });
        assert.deepEqual(
          events.filter((e) => e.type === 'turn').map((e) => e.turn),
          [3],
        );
      },
    );
  });
});
