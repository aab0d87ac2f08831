import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

/** Sends `text` on a raw connection and resolves with what the server answered once it closes the connection. */
function rawExchange(url: string, text: string): Promise<{ answer: string; ms: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('close', () => ok({ answer, ms: performance.now() - t0 }));
    socket.on('error', fail);
    setTimeout(() => {
      socket.destroy();
      fail(new Error(`the server kept the connection open for 20 s; answered so far: ${answer}`));
    }, 20_000).unref();
  });
}

describe("Node's request and header timeouts", () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_REQUEST_TIMEOUT_SECONDS: '2' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'slow', maxTurns: 1 }));
  });
  after(() => stack.stop());

  it('cuts a client that never finishes its headers (408)', async () => {
    const { answer, ms } = await rawExchange(stack.url, 'GET /healthz HTTP/1.1\r\nHost: cadenza\r\nX-Slow: ');
    console.log(`# figure: connection with unfinished headers closed after ${Math.round(ms)} ms`);
    assert.match(answer, /^HTTP\/1\.1 408/);
    assert.ok(ms < 10_000, `closed after ${ms} ms`);
  });

  it('cuts a client that never finishes its body (408)', async () => {
    const head = `POST /api/v1/missions HTTP/1.1\r\nHost: cadenza\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const { answer, ms } = await rawExchange(stack.url, `${head}{"skill": "slow",`);
    console.log(`# figure: connection with an unfinished body closed after ${Math.round(ms)} ms`);
    assert.match(answer, /^HTTP\/1\.1 408/);
    assert.ok(ms < 10_000, `closed after ${ms} ms`);
    assert.deepEqual(await stack.db.selectFrom('missions').select('id').execute(), [], 'nothing was started');
  });

  it('keeps an SSE stream open longer than the request timeout, to its terminal event', async () => {
    stack.model.enqueue({ reply: { text: 'after a long think' }, delayMs: 4_000 });
    const { id } = await stack.api.startMission(key, { skill: 'slow', objective: 'Think slowly.' });
    const t0 = performance.now();
    const { status, frames } = await stack.api.readEvents(key, id);
    const ms = performance.now() - t0;
    assert.equal(status, 200);
    assert.ok(ms > 3_000, `the stream lasted ${ms} ms, past the 2 s request timeout`);
    const last = eventsOf(frames).at(-1);
    assert.equal(last?.type, 'status');
    assert.equal((last as { status?: string }).status, 'completed');
  });
});
