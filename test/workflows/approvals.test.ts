import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { decideToolUpdate, type ToolDecision } from '../../contracts/approvals.ts';
import { eventsQuery, type MissionEvent } from '../../contracts/events.ts';
import { StatusSearchAttribute, cancelToolUpdate, stateQuery, type ToolCallInput, type ToolCallResult } from '../../contracts/mission.ts';
import { answer, plan, startWorkflowHarness, toolTurn, until, type MissionRun } from './workflow-harness.ts';

/** lab.scan needs approval; lab.lookup does not. */
const approvalPlan = (approvalTimeoutS = 600) =>
  plan({
    approvalTimeoutS,
    tools: [
      { modelName: 'lab__lookup', qualifiedName: 'lab.lookup', timeoutS: 5, retries: 0 },
      { modelName: 'lab__scan', qualifiedName: 'lab.scan', timeoutS: 5, retries: 0, approval: true },
    ],
  });
const scanAndLookup = (i: { turn: number }) => (i.turn > 1 ? answer('went on') : toolTurn(['tu_s', 'lab__scan'], ['tu_l', 'lab__lookup']));
const done = (): ToolCallResult => ({ status: 'completed', durationMs: 1 });

const statusOf = async (m: MissionRun, id: string) => (await m.handle.query(stateQuery)).tools.find((t) => t.toolUseId === id)?.status;
const searchStatus = async (m: MissionRun) => (await m.handle.describe()).typedSearchAttributes.get(StatusSearchAttribute);
const events = async (m: MissionRun): Promise<MissionEvent[]> => (await m.handle.query(eventsQuery, 0)).events;
const decide = (m: MissionRun, id: string, d: ToolDecision) => m.handle.executeUpdate(decideToolUpdate, { args: [id, d] });
async function refusal(p: Promise<unknown>): Promise<string | null | undefined> {
  const err = await p.then(
    () => assert.fail('the decision was accepted'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure);
  return err.cause.type;
}
/** Waits until the scan call awaits approval and its sibling has finished. */
const awaitingScan = (m: MissionRun) =>
  until(async () => (await statusOf(m, 'tu_s')) === 'awaiting_approval' && (await statusOf(m, 'tu_l')) === 'completed', {
    what: 'scan awaiting approval, lookup completed',
  });

describe('tool approvals in the mission workflow, with stub activities', () => {
  let harness: Awaited<ReturnType<typeof startWorkflowHarness>>;
  before(async () => {
    harness = await startWorkflowHarness();
  });
  after(() => harness.teardown());

  it('an approved call runs once with the edited input, its sibling ran meanwhile and is not re-run, the wait is visible', async () => {
    let release!: () => void;
    const held = new Promise<void>((ok) => (release = ok));
    const tool = async (input: ToolCallInput) => {
      if (input.qualifiedName === 'lab.scan') await held;
      return done();
    };
    await harness.run({ plan: approvalPlan(), model: scanAndLookup, tool }, async (m) => {
      await awaitingScan(m);
      assert.deepEqual(
        m.calls.tools.map((t) => t.toolUse.id),
        ['tu_l'],
        'the sibling ran while the scan waits; the scan has not run',
      );
      assert.equal(await searchStatus(m), 'awaiting_approval');
      // The Web UI's current details (served by the SDK's built-in metadata query).
      const details = await m.handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');
      assert.match(details.currentDetails, /awaiting approval\*\*: lab\.scan \(tu_s\)/);
      const requested = (await events(m)).find((e) => e.type === 'approval_requested');
      assert.ok(requested && requested.type === 'approval_requested');
      assert.deepEqual([requested.toolUseId, requested.tool, requested.turn, requested.input], ['tu_s', 'lab.scan', 1, {}]);
      assert.ok(Date.parse(requested.expiresAt) - Date.parse(requested.at) === 600_000);
      assert.equal(
        (await events(m)).filter((e) => e.type === 'tool_start' && e.toolUseId === 'tu_s').length,
        0,
        'no tool_start before approval',
      );

      assert.deepEqual(await decide(m, 'tu_s', { decision: 'approve', input: { target: 'edited' } }), {
        toolUseId: 'tu_s',
        decision: 'approved',
      });
      await until(() => m.calls.tools.length === 2, { what: 'the approved scan running' });
      assert.equal(await statusOf(m, 'tu_s'), 'running');
      assert.equal(await searchStatus(m), 'running', 'back to running once nothing waits');
      assert.equal(await refusal(decide(m, 'tu_s', { decision: 'deny' })), 'ApprovalNotPending');
      release();

      const result = await m.handle.result();
      assert.equal(result.text, 'went on');
      assert.deepEqual(m.calls.tools.find((t) => t.toolUse.id === 'tu_s')!.toolUse.input, { target: 'edited' });
      assert.equal(m.calls.tools.filter((t) => t.toolUse.id === 'tu_l').length, 1, 'the sibling is never re-run');
      assert.deepEqual(m.calls.model[1]!.previous, [
        { toolUseId: 'tu_s', status: 'completed' },
        { toolUseId: 'tu_l', status: 'completed' },
      ]);
      assert.ok(result.metrics.approvalWaitMs! > 0 && result.metrics.approvalWaitMs! <= result.metrics.elapsedMs);
      assert.deepEqual(
        m.calls.approvals.map((a) => [a.toolUseId, a.status, 'editedInput' in a ? a.editedInput : undefined]),
        [
          ['tu_s', 'pending', undefined],
          ['tu_s', 'approved', { target: 'edited' }],
        ],
      );
      const decided = (await events(m)).find((e) => e.type === 'approval_decided');
      assert.ok(decided?.type === 'approval_decided' && decided.decision === 'approved' && decided.edited === true);
    });
  });

  it('a denied call never runs: the model reads "denied by the user: <reason>" and the mission goes on', async () => {
    let release!: () => void;
    const held = new Promise<void>((ok) => (release = ok));
    // The second model call waits, so the finished call can be asked about while the mission still runs.
    const model = async (i: { turn: number }) => (i.turn > 1 ? (await held, answer('went on')) : scanAndLookup(i));
    await harness.run({ plan: approvalPlan(), model, tool: done }, async (m) => {
      await awaitingScan(m);
      assert.deepEqual(await decide(m, 'tu_s', { decision: 'deny', reason: 'not on production' }), {
        toolUseId: 'tu_s',
        decision: 'denied',
      });
      await until(async () => (await statusOf(m, 'tu_s')) === 'denied');
      assert.equal(await refusal(decide(m, 'tu_s', { decision: 'approve' })), 'ToolCallFinished');
      release();
      assert.equal((await m.handle.result()).text, 'went on');
      assert.deepEqual(
        m.calls.tools.map((t) => t.toolUse.id),
        ['tu_l'],
      );
      assert.deepEqual(m.calls.model[1]!.previous[0], {
        toolUseId: 'tu_s',
        status: 'denied',
        error: 'denied by the user: not on production',
      });
      const ended = m.calls.approvals.at(-1)!;
      assert.equal(ended.status, 'denied');
      assert.equal('deniedText' in ended && ended.deniedText, 'denied by the user: not on production');
      assert.deepEqual(
        m.calls.ends.map((e) => [e.toolUseId, e.status]),
        [['tu_s', 'denied']],
      );
    });
  });

  it('no decision within APPROVAL_TIMEOUT_S counts as denied, and the mission goes on', async () => {
    await harness.run({ plan: approvalPlan(1), model: scanAndLookup, tool: done }, async (m) => {
      assert.equal((await m.handle.result()).text, 'went on');
      const outcome = m.calls.model[1]!.previous[0]!;
      assert.equal(outcome.status, 'denied');
      assert.match(outcome.error!, /no one approved this call within 1 s/);
      assert.equal(m.calls.approvals.at(-1)!.status, 'timed_out');
      assert.deepEqual(
        m.calls.tools.map((t) => t.toolUse.id),
        ['tu_l'],
      );
    });
  });

  it('unknown calls and calls that need no approval are refused, writing no history', async () => {
    await harness.run({ plan: approvalPlan(), model: scanAndLookup, tool: done }, async (m) => {
      await awaitingScan(m);
      assert.equal(await refusal(decide(m, 'tu_nope', { decision: 'approve' })), 'ToolCallNotFound');
      assert.equal(await refusal(decide(m, 'tu_l', { decision: 'approve' })), 'ToolCallFinished');
      await decide(m, 'tu_s', { decision: 'approve' });
      await m.handle.result();
    });
  });

  it('cancelling the waiting call ends the wait at once: cancelled, never run, the mission goes on', async () => {
    await harness.run({ plan: approvalPlan(), model: scanAndLookup, tool: done }, async (m) => {
      await awaitingScan(m);
      const reply = await m.handle.executeUpdate(cancelToolUpdate, { args: ['tu_s'] });
      assert.deepEqual([reply.toolUseId, reply.status], ['tu_s', 'cancelling']);
      assert.equal((await m.handle.result()).text, 'went on');
      assert.deepEqual(m.calls.model[1]!.previous[0], { toolUseId: 'tu_s', status: 'cancelled' });
      assert.equal(m.calls.approvals.at(-1)!.status, 'cancelled');
      assert.deepEqual(
        m.calls.tools.map((t) => t.toolUse.id),
        ['tu_l'],
      );
    });
  });

  it('cancelling the mission while a call waits ends it at once as cancelled', async () => {
    const tool = async () => {
      const ctx = Context.current();
      return ctx.cancelled;
    };
    await harness.run({ plan: approvalPlan(), model: () => toolTurn(['tu_s', 'lab__scan']), tool }, async (m) => {
      await until(async () => (await statusOf(m, 'tu_s')) === 'awaiting_approval');
      await m.handle.cancel();
      await assert.rejects(m.handle.result(), WorkflowFailedError);
      assert.equal(await statusOf(m, 'tu_s'), 'cancelled');
      assert.equal(await searchStatus(m), 'cancelled');
      assert.equal(m.calls.approvals.at(-1)!.status, 'cancelled');
      assert.deepEqual(m.calls.tools, []);
    });
  });
});
