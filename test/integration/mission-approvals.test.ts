import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { spawnWorker } from '../helpers/worker-process.ts';

/** lab.wipe needs approval in its app.yml; the skill requires it for lab.scan too; lab.lookup needs none. */
const GUARDED_SKILL = [
  '---',
  'name: guarded',
  'description: Test skill whose risky tools a person approves.',
  'allowed-tools: lab.wipe lab.scan lab.lookup',
  'metadata:',
  '  cadenza-max-turns: "3"',
  '  cadenza-approval: lab.scan',
  '---',
  'Use the tools to answer the objective.',
  '',
].join('\n');

type Tool = { toolUseId: string; status: string };

/** Helpers over one stack: the mission's tool statuses, the pending list, the decision routes. */
function approvalsOf(stack: TestStack, key: string) {
  const api = stack.api;
  return {
    toolStatus: async (id: string, toolUseId: string) =>
      ((await api.getMission(key, id)).body.tools as Tool[] | undefined)?.find((t) => t.toolUseId === toolUseId)?.status,
    pending: async (k = key) => (await api.request('GET', '/api/v1/approvals', { key: k })).body.items as Array<Record<string, unknown>>,
    approve: (id: string, toolUseId: string, body: unknown = {}, k = key) =>
      api.request('POST', `/api/v1/missions/${id}/tools/${toolUseId}/approve`, { key: k, body }),
    deny: (id: string, toolUseId: string, body: unknown = {}, k = key) =>
      api.request('POST', `/api/v1/missions/${id}/tools/${toolUseId}/deny`, { key: k, body }),
    approvalRow: (id: string) => stack.db.selectFrom('tool_approvals').selectAll().where('mission_id', '=', id).executeTakeFirst(),
  };
}

describe('human approval of risky tools, end to end', () => {
  let stack: TestStack;
  let key: string;
  let a: ReturnType<typeof approvalsOf>;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    a = approvalsOf(stack, key);
    await stack.api.createSkill(key, GUARDED_SKILL);
  });
  after(() => stack.stop());

  // Listed by GET /approvals too: the workflow writes the pending row just after the call's status changes.
  const awaiting = async (id: string, toolUseId: string) => {
    await until(async () => (await a.toolStatus(id, toolUseId)) === 'awaiting_approval', { what: `${toolUseId} awaiting approval` });
    await until(async () => (await a.pending()).some((p) => p.toolUseId === toolUseId), { what: `${toolUseId} in GET /approvals` });
  };

  it('approve: the call waits, visible everywhere, while its sibling runs once; approved, it runs once and the mission goes on', async () => {
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_w', name: 'lab__wipe', input: { target: 'disk' } },
            { id: 'tu_l', name: 'lab__lookup', input: { q: 'x' } },
          ],
        },
      },
      { reply: { text: 'wiped' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'guarded', objective: 'Wipe the disk.' });
    await awaiting(id, 'tu_w');
    await until(async () => (await a.toolStatus(id, 'tu_l')) === 'completed', { what: 'the sibling completed' });
    assert.equal(stack.tools.requests.filter((r) => r.tool === 'wipe').length, 0, 'not run before approval');

    const [item] = await a.pending();
    assert.deepEqual(
      [item!.missionId, item!.toolUseId, item!.tool, item!.input, item!.skill],
      [id, 'tu_w', 'lab.wipe', { target: 'disk' }, 'guarded'],
    );
    assert.equal((item!.links as { approve: string }).approve, `/api/v1/missions/${id}/tools/tu_w/approve`);
    const catalogue = await stack.api.request('GET', '/api/v1/apps/lab/tools/wipe', { key });
    assert.equal(catalogue.body.approval, 'required', 'the catalogue says which tools need approval');
    // The search attribute lists every mission waiting on a person (visibility is eventually consistent).
    const waiting = async () => {
      const ids: string[] = [];
      for await (const wf of stack.temporal.workflow.list({
        query: `CadenzaStatus = 'awaiting_approval' AND WorkflowId = 'mission-${id}'`,
      }))
        ids.push(wf.workflowId);
      return ids.length === 1;
    };
    await until(waiting, { what: 'the mission in the awaiting_approval visibility query', timeoutMs: 30_000 });

    const approved = await a.approve(id, 'tu_w');
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.deepEqual(approved.body, { toolUseId: 'tu_w', decision: 'approved' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'wiped');
    assert.ok(mission.result.metrics.approvalWaitMs > 0 && mission.result.metrics.approvalWaitMs <= mission.result.metrics.elapsedMs);
    const wipes = stack.tools.requests.filter((r) => r.tool === 'wipe');
    assert.equal(wipes.length, 1);
    assert.deepEqual(wipes[0]!.input, { target: 'disk' });
    assert.equal(stack.tools.requests.filter((r) => r.tool === 'lookup').length, 1, 'the sibling is never re-run');
    assert.equal((await a.approve(id, 'tu_w')).status, 409, 'decided, and the mission is over');
    assert.deepEqual(await a.pending(), []);

    const types = eventsOf((await stack.api.readEvents(key, id)).frames).map((e) =>
      'toolUseId' in e ? `${e.type}:${e.toolUseId}` : e.type,
    );
    const at = (t: string) => types.indexOf(t);
    assert.ok(at('approval_requested:tu_w') >= 0 && at('approval_requested:tu_w') < at('approval_decided:tu_w'));
    assert.ok(at('approval_decided:tu_w') < at('tool_start:tu_w'), 'the tool starts after the approval');
    assert.equal((await a.approvalRow(id))!.status, 'approved');
  });

  it('approve with an edited input checked against the tool’s schema (400 naming the field); a skill can add approval', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_s', name: 'lab__scan', input: { target: 'prod' } }] } },
      { reply: { text: 'scanned' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'guarded', objective: 'Scan something.' });
    await awaiting(id, 'tu_s');
    const wrongType = await a.approve(id, 'tu_s', { input: { target: 5 } });
    assert.equal(wrongType.status, 400);
    assert.deepEqual(
      wrongType.body.error.details.fields.map((f: { field: string }) => f.field),
      ['input.target'],
    );
    const missing = await a.approve(id, 'tu_s', { input: {} });
    assert.equal(missing.status, 400);
    assert.match(JSON.stringify(missing.body.error.details.fields), /input\.target/);
    assert.equal((await a.approve(id, 'tu_s', { input: 'no' })).status, 400);
    assert.equal(await a.toolStatus(id, 'tu_s'), 'awaiting_approval', 'a refused edit decides nothing');

    assert.equal((await a.approve(id, 'tu_s', { input: { target: 'staging' } })).status, 200);
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const scans = stack.tools.requests.filter((r) => r.tool === 'scan');
    assert.deepEqual(scans.at(-1)!.input, { target: 'staging' });
    const row = await a.approvalRow(id);
    assert.deepEqual([row!.status, row!.edited_input, row!.input], ['approved', { target: 'staging' }, { target: 'prod' }]);
  });

  it('deny: the tool never runs, the model reads "denied by the user: <reason>", the mission goes on', async () => {
    const before = stack.tools.requests.filter((r) => r.tool === 'wipe').length;
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_d', name: 'lab__wipe', input: { target: 'prod' } }] } },
      { reply: { text: 'not wiped' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'guarded', objective: 'Wipe prod.' });
    await awaiting(id, 'tu_d');
    assert.equal((await a.deny(id, 'tu_d', { reason: 42 })).status, 400);
    const denied = await a.deny(id, 'tu_d', { reason: 'never on prod' });
    assert.deepEqual([denied.status, denied.body], [200, { toolUseId: 'tu_d', decision: 'denied' }]);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'not wiped');
    assert.equal(mission.tools.find((t: Tool) => t.toolUseId === 'tu_d').status, 'denied');
    assert.equal(stack.tools.requests.filter((r) => r.tool === 'wipe').length, before, 'the denied tool never ran');
    const result = stack.model.requests.at(-1)!.toolResults[0]!;
    assert.deepEqual([result.toolUseId, result.content, result.isError], ['tu_d', 'denied by the user: never on prod', true]);
    assert.equal((await a.deny(id, 'tu_d')).status, 409);
    const row = await a.approvalRow(id);
    assert.deepEqual([row!.status, row!.reason], ['denied', 'never on prod']);
  });

  it('cancelling the waiting call ends the wait at once; the mission goes on and nothing is left to approve', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_c', name: 'lab__wipe', input: { target: 'x' } }] } },
      { reply: { text: 'gave up' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'guarded', objective: 'Wipe, then not.' });
    await awaiting(id, 'tu_c');
    const cancel = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_c/cancel`, { key });
    assert.equal(cancel.status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.result.text, 'gave up');
    assert.equal(mission.tools[0].status, 'cancelled');
    assert.equal(stack.model.requests.at(-1)!.toolResults[0]!.isError, true);
    assert.equal((await a.approvalRow(id))!.status, 'cancelled');
    assert.deepEqual(await a.pending(), []);
    assert.equal((await a.approve(id, 'tu_c')).status, 409);
  });

  it('someone else’s approval is a 404, an unknown call a 404; approving needs mission.run; the list is the caller’s own', async () => {
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_o', name: 'lab__wipe', input: { target: 'y' } }] } }, { reply: { text: 'ok' } });
    const { id } = await stack.api.startMission(key, { skill: 'guarded', objective: 'Wipe y.' });
    await awaiting(id, 'tu_o');
    const stranger = await stack.api.newKey();
    assert.equal((await a.approve(id, 'tu_o', {}, stranger)).status, 404);
    assert.equal((await a.deny(id, 'tu_o', {}, stranger)).status, 404);
    assert.deepEqual(await a.pending(stranger), []);
    assert.equal((await a.pending()).length, 1);
    assert.equal((await a.approve(id, 'tu_nope')).status, 404);
    const reader = await stack.api.newKey(['mission.read']);
    assert.equal((await a.approve(id, 'tu_o', {}, reader)).status, 403, 'a key without mission.run is refused');
    assert.equal((await a.approve(id, 'tu_o')).status, 200);
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
  });
});

describe('approvals across worker restarts and timeouts (worker processes)', () => {
  let stack: TestStack;
  let key: string;
  let a: ReturnType<typeof approvalsOf>;
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    a = approvalsOf(stack, key);
    await stack.api.createSkill(key, GUARDED_SKILL);
  });
  after(() => stack.stop());

  it('a worker killed while a call waits: the next worker serves the decision, and the call runs once', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_k', name: 'lab__wipe', input: { target: 'z' } }] } },
      { reply: { text: 'survived' } },
    );
    const first = await spawnWorker(stack.env);
    const { id } = await stack.api.startMission(key, { skill: 'guarded', objective: 'Wipe across a crash.' });
    await until(async () => (await a.pending()).length === 1, { what: 'the pending approval', timeoutMs: 60_000 });
    assert.notEqual(await first.kill('SIGKILL'), 0);
    assert.equal((await a.pending()).length, 1, 'the pending list needs no worker');
    const second = await spawnWorker(stack.env);
    try {
      // Until Temporal gives up on the dead worker's sticky queue, the API answers 503 "try again"; a retry re-attaches
      // to the same update, so it is a 200, never a 409 from its own first try.
      let approved = await a.approve(id, 'tu_k');
      for (const deadline = Date.now() + 60_000; approved.status === 503 && Date.now() < deadline;) approved = await a.approve(id, 'tu_k');
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.deepEqual(approved.body, { toolUseId: 'tu_k', decision: 'approved' });
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      assert.equal(mission.result.text, 'survived');
      assert.equal(stack.tools.requests.filter((r) => r.tool === 'wipe').length, 1);
    } finally {
      await second.kill('SIGTERM');
    }
  });

  it('no decision within APPROVAL_TIMEOUT_S counts as denied: the model is told, the mission goes on', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_t', name: 'lab__wipe', input: { target: 't' } }] } },
      { reply: { text: 'timed out' } },
    );
    const worker = await spawnWorker({ ...stack.env, APPROVAL_TIMEOUT_S: '2' });
    try {
      const { id } = await stack.api.startMission(key, { skill: 'guarded', objective: 'Wait for nobody.' });
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      assert.equal(mission.tools[0].status, 'denied');
      const result = stack.model.requests.at(-1)!.toolResults[0]!;
      assert.match(result.content, /^denied: no one approved this call within 2 s/);
      assert.equal(result.isError, true);
      assert.equal((await a.approvalRow(id))!.status, 'timed_out');
      assert.equal(stack.tools.requests.filter((r) => r.tool === 'wipe' && r.input.target === 't').length, 0);
      assert.equal((await a.approve(id, 'tu_t')).status, 409);
    } finally {
      await worker.kill('SIGTERM');
    }
  });
});
