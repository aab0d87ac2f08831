import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { startProductionShape, WORKER_PER_QUEUE, type ProductionShape } from '../../testkit/chaos/production-shape.ts';
import { ALL_CAPABILITIES, createApiClient, eventsOf } from '../../testkit/api-client.ts';
import { skillMd } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

type Tool = { toolUseId: string; status: string };

// The cluster tier (scripts/test-cluster.sh): Cadenza as production runs it, on the real Temporal server whose frontend
// serves TLS with a self-signed CA: two API processes, three worker processes (one per task queue), the Web UI.
// Starting a cluster of its own and five Cadenza processes takes minutes on a loaded machine: the suite's own limit.
describe('production shape on the cluster: TLS, two APIs, a worker per queue, the Web UI', { timeout: 900_000 }, () => {
  let shape: ProductionShape;
  before(
    async () => {
      shape = await startProductionShape(() => {}, { cluster: { tls: true }, apis: 2, workers: WORKER_PER_QUEUE });
    },
    { timeout: 300_000 },
  );
  after(() => shape?.stop());

  it('the frontend serves only TLS: a plain client and one without the CA are refused, one with it answered', async () => {
    const address = shape.temporalAddress;
    const ca = readFileSync(shape.cluster!.caPath!);
    for (const tls of [undefined, { serverNameOverride: 'localhost' }])
      await assert.rejects(
        Connection.connect({ address, ...(tls ? { tls } : {}), connectTimeout: '3s' }),
        `refused with tls ${JSON.stringify(tls)}`,
      );
    // Why the second is refused: the frontend's certificate chains to a CA the system does not trust.
    const [host, port] = address.split(':') as [string, string];
    const verdict = (options: ConnectionOptions) =>
      new Promise<string>((ok) => {
        const socket = tlsConnect({ host, port: Number(port), servername: 'localhost', ALPNProtocols: ['h2'], ...options });
        socket.once('secureConnect', () => (socket.end(), ok('trusted')));
        socket.once('error', (err: NodeJS.ErrnoException) => ok(err.code ?? err.message));
      });
    assert.match(await verdict({}), /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN)$/);
    assert.equal(await verdict({ ca }), 'trusted');
    const connection = await Connection.connect({ address, tls: { serverRootCACertificate: ca, serverNameOverride: 'localhost' } });
    try {
      const info = await connection.workflowService.getSystemInfo({});
      assert.ok(info.serverVersion, 'the cluster answered over TLS');
    } finally {
      await connection.close();
    }
  });

  it('each worker process polls only its own task queue (WORKER_QUEUES), as an operator sees in Temporal', async () => {
    const ca = readFileSync(shape.cluster!.caPath!);
    const connection = await Connection.connect({
      address: shape.temporalAddress,
      tls: { serverRootCACertificate: ca, serverNameOverride: 'localhost' },
    });
    const { TASK_QUEUE_TYPE_WORKFLOW: WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY: ACTIVITY } = proto.temporal.api.enums.v1.TaskQueueType;
    // The SDK's default identity is pid@host: which worker process polls each queue.
    const pollers = async (name: string, taskQueueType: typeof WORKFLOW | typeof ACTIVITY) => {
      const res = await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name }, taskQueueType });
      return [...new Set((res.pollers ?? []).map((p) => Number(p.identity?.split('@')[0])))].sort();
    };
    const pid = (n: number) => [shape.workers[n]!.pid!];
    try {
      await until(async () => (await pollers('chaos', WORKFLOW)).length > 0, { what: 'the missions queue polled' });
      assert.deepEqual(await pollers('chaos', WORKFLOW), pid(0), 'missions: worker-1 only');
      assert.deepEqual(await pollers('chaos-model', ACTIVITY), pid(1), 'model calls: worker-2 only');
      assert.deepEqual(await pollers('chaos-tools', ACTIVITY), pid(2), 'tool calls: worker-3 only');
    } finally {
      await connection.close();
    }
  });

  it('runs a mission over TLS started on one API and watched on the other: parallel tools, a tool cancel, an approval', async () => {
    const [a, b] = shape.urls.map((url) => createApiClient(url, shape.adminKey)) as [
      ReturnType<typeof createApiClient>,
      ReturnType<typeof createApiClient>,
    ];
    const key = await a.newKey(ALL_CAPABILITIES, { tenantId: 'prod', userId: 'ada' });
    // lab.wipe needs a person's approval (its app.yml); lab.scan hangs until cancelled; lab.lookup answers.
    await a.createSkill(key, skillMd({ name: 'prod-shape', tools: ['lab.scan', 'lab.lookup', 'lab.wipe'], maxTurns: 3 }));
    shape.tools.on('scan', () => ({ hang: true }));
    shape.tools.on('lookup', () => ({ body: { hit: 'found it' } }));
    shape.tools.on('wipe', () => ({ body: { wiped: true } }));
    shape.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_scan', name: 'lab__scan', input: { target: 'big' } },
            { id: 'tu_look', name: 'lab__lookup', input: { q: 'q' } },
            { id: 'tu_wipe', name: 'lab__wipe', input: { target: 'disk' } },
          ],
        },
      },
      { reply: { text: 'Looked up and wiped; the scan was cancelled.' } },
    );
    const { id } = await a.startMission(key, { skill: 'prod-shape', objective: 'Scan, look up and wipe.' });
    const stream = b.readEvents(key, id);
    const toolStatus = async (toolUseId: string) =>
      ((await b.getMission(key, id)).body.tools as Tool[] | undefined)?.find((t) => t.toolUseId === toolUseId)?.status;
    await until(async () => (await toolStatus('tu_wipe')) === 'awaiting_approval', { what: 'tu_wipe awaiting approval' });
    await until(async () => (await toolStatus('tu_look')) === 'completed', { what: 'tu_look completed' });
    await shape.tools.waitFor(() => shape.tools.requests.some((r) => r.tool === 'scan'));

    assert.equal((await b.request('POST', `/api/v1/missions/${id}/tools/tu_scan/cancel`, { key })).status, 202);
    await until(async () => (await toolStatus('tu_scan')) === 'cancelled', { what: 'tu_scan cancelled' });
    const approved = await a.request('POST', `/api/v1/missions/${id}/tools/tu_wipe/approve`, { key, body: {} });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));

    const mission = await a.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'Looked up and wiped; the scan was cancelled.');
    const statuses = Object.fromEntries((mission.tools as Tool[]).map((t) => [t.toolUseId, t.status]));
    assert.deepEqual(statuses, { tu_scan: 'cancelled', tu_look: 'completed', tu_wipe: 'completed' });
    assert.equal(shape.tools.requests.filter((r) => r.tool === 'wipe').length, 1, 'the approved call ran once');

    const events = eventsOf((await stream).frames);
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, j) => j + 1),
      'the other API streamed every event, in order, without gaps',
    );
    const ends = events
      .filter((e) => e.type === 'tool_end')
      .map((e) => [(e as { toolUseId: string }).toolUseId, (e as { status: string }).status]);
    assert.deepEqual(Object.fromEntries(ends), statuses, 'each tool’s end on the stream');
    assert.deepEqual(events.at(-1), { ...events.at(-1), type: 'status', status: 'completed' });
    for (const p of [...shape.workers, shape.api]) assert.deepEqual(p.errorLines(), [], `${p.name} logged no error`);

    // The Web UI, pointed at the same frontend over TLS, lists the mission; the console links there.
    const uiUrl = shape.cluster!.uiUrl;
    assert.ok(uiUrl, 'the Web UI server was built and started');
    const me = await b.request('GET', '/api/v1/me', { key });
    assert.equal(me.body.temporal.uiUrl, uiUrl, 'the console links runs to the cluster’s Web UI');
    const query = encodeURIComponent(`WorkflowId = 'mission-${id}'`);
    let listed: Array<{ execution: { workflowId: string }; status: string }> = [];
    await until(
      async () => {
        const res = await fetch(`${uiUrl}/api/v1/namespaces/default/workflows?query=${query}`);
        listed = ((await res.json()) as { executions?: typeof listed }).executions ?? [];
        return listed.length > 0;
      },
      { what: 'the mission listed by the Web UI' },
    );
    assert.deepEqual(
      listed.map((w) => [w.execution.workflowId, w.status]),
      [[`mission-${id}`, 'WORKFLOW_EXECUTION_STATUS_COMPLETED']],
    );
  });
});
