import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

// A slow embeddings endpoint (which is not handed the abort signal): a cancel landing on a call waiting on it, and a
// mission's end, which must not wait on it.
describe('a slow embeddings endpoint', () => {
  let stack: TestStack;
  let server: Server;
  let key: string;
  const HANG_MS = 8_000;
  let hungAt: number | undefined;
  before(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const { input } = JSON.parse(raw) as { input: string[] };
        const reply = () =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ data: input.map((_t, index) => ({ index, embedding: [1, 0, 0] })) }));
        if (!input.some((t) => t.includes('slow'))) return reply();
        hungAt = Date.now();
        setTimeout(reply, HANG_MS);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const { port } = server.address() as { port: number };
    stack = await startTestStack({ env: { EMBEDDINGS_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'recaller', maxTurns: 3 }));
    // A stored vector to compare with: without one, a search does not embed its query at all.
    const memory = await stack.api.request('POST', '/api/v1/memories', { key, body: { content: 'An old note.' } });
    assert.equal(memory.status, 201);
  });
  after(async () => {
    await stack.stop();
    server.closeAllConnections();
    server.close();
  });

  it('reports the cancelled call as cancelled, promptly', async () => {
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_recall', name: 'search_memory', input: { query: 'a slow recollection' } }] } },
      { reply: { text: 'Answered without memories.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'recaller', objective: 'Recall things.' });
    await until(() => hungAt !== undefined, { what: 'the tool reaching the embeddings endpoint' });

    const cancel = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_recall/cancel`, { key });
    assert.equal(cancel.status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const tool = mission.tools.find((t: { toolUseId: string }) => t.toolUseId === 'tu_recall');
    assert.equal(tool.status, 'cancelled');
    assert.ok(tool.durationMs < HANG_MS - 1_000, `ended after ${tool.durationMs} ms, not when the endpoint answered`);
    const results = stack.model.requests[1]!.toolResults;
    assert.ok(results[0]!.isError && /cancelled/.test(results[0]!.content), 'the model sees cancelled');
  });

  it('a slow embeddings endpoint does not hold a mission’s end: the result is out first, the memory’s vector follows', async () => {
    hungAt = undefined;
    stack.model.enqueue({ reply: { text: 'A slow answer.' } });
    const { id } = await stack.api.startMission(key, { skill: 'recaller', objective: 'Answer at once.' });
    await until(() => hungAt !== undefined, { what: 'the completion memory reaching the embeddings endpoint' });
    // The endpoint holds the vector for HANG_MS; the mission ends meanwhile, in Temporal and in Postgres.
    await stack.handle(id).result();
    assert.ok(Date.now() < hungAt! + HANG_MS, 'the workflow closed while the endpoint still held the vector');
    const row = await stack.db.selectFrom('missions').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'completed');
    const memory = () =>
      stack.db.selectFrom('memories').select(['embedding']).where('source_key', '=', `mission/${id}/result`).executeTakeFirstOrThrow();
    assert.equal((await memory()).embedding, null, 'stored before its vector');
    await until(async () => (await memory()).embedding !== null, { timeoutMs: HANG_MS * 3, what: 'the memory’s vector' });
  });
});
