import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { propagation, SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import proto from '@temporalio/proto';
import { Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';
import { IGNORED_PROGRESS_SINKS } from '../../events/progress-sinks.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

const HISTORIES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
// A caller's own trace: the mission's spans must join it.
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

// The workflow bundle with the tracing interceptors, built once for this file (webpack takes seconds).
let traced: Promise<WorkflowBundleOption> | undefined;
const tracedBundle = () => (traced ??= buildWorkflowBundle({ tracing: true }).then((b) => ({ code: b.code })));

/** A mission with one model call asking for lab.lookup, then an answer; returns its id once it completed. */
async function runLookupMission(stack: TestStack, headers: Record<string, string> = {}): Promise<string> {
  const key = await stack.api.newKey();
  await stack.api.createSkill(key, skillMd({ name: 'traced', tools: ['lab.lookup'], maxTurns: 3 }));
  stack.tools.on('lookup', () => ({ body: { hit: 'yes' } }));
  stack.model.enqueue(
    { reply: { toolUses: [{ id: 'tu_1', name: 'lab__lookup', input: { q: 'x' } }], usage: { inputTokens: 321, outputTokens: 12 } } },
    { reply: { text: 'done' } },
  );
  const res = await stack.api.request('POST', '/api/v1/missions', {
    key,
    body: { workspaceCode: 'ws-1', skill: 'traced', objective: 'Look it up.' },
    headers,
  });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const id = res.body.id as string;
  assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
  return id;
}

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack();
  });
  after(() => stack?.stop());

  it('sets nothing up: no tracing, no global propagator, no traceparent sent to tools', async () => {
    assert.equal(stack.config.telemetry.tracing, undefined);
    assert.equal(stack.tracing, undefined);
    await runLookupMission(stack, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    assert.deepEqual(propagation.fields(), [], 'no propagator registered in the process');
    const call = stack.tools.requests.find((r) => r.tool === 'lookup');
    assert.ok(call, 'the tool was called');
    assert.equal(call.headers.traceparent, undefined);
  });
});

describe('tracing of a mission (in-memory exporter, through the builders)', () => {
  const exporter = new InMemorySpanExporter();
  let bundle: WorkflowBundleOption;
  let stack: TestStack;
  let missionId: string;
  let spans: ReadableSpan[];
  before(async () => {
    bundle = await tracedBundle();
    stack = await startTestStack({ spanExporter: exporter, workflowBundle: bundle, env: { LOG_LEVEL: 'info' } });
    missionId = await runLookupMission(stack, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    // The workflow's RunWorkflow span ends with the run and leaves the sandbox through the sink: wait for it.
    await until(
      async () => {
        await stack.tracing!.flush();
        return exporter.getFinishedSpans().some((s) => s.name === 'RunWorkflow:missionWorkflow');
      },
      { what: 'the workflow span exported' },
    );
    spans = exporter.getFinishedSpans();
  });
  after(() => stack?.stop());

  const one = (name: string, parent?: ReadableSpan) => {
    const found = spans.filter((s) => s.name === name && (!parent || s.parentSpanId === parent.spanContext().spanId));
    assert.equal(found.length, 1, `one ${name}${parent ? ` under ${parent.name}` : ''}: ${spans.map((s) => s.name).join(', ')}`);
    return found[0]!;
  };

  it('puts every span of the mission in the caller’s trace', () => {
    const mine = spans.filter(
      (s) => s.attributes['cadenza.mission.id'] === missionId || s.attributes.temporalWorkflowId === `mission-${missionId}`,
    );
    assert.ok(mine.length >= 8, `the mission's spans: ${mine.map((s) => s.name).join(', ')}`);
    assert.deepEqual(new Set(mine.map((s) => s.spanContext().traceId)), new Set([TRACE_ID]));
  });

  it('chains HTTP POST → StartWorkflow → RunWorkflow → StartActivity → RunActivity → the model and tool spans', () => {
    const post = one('POST /api/v1/missions');
    assert.equal(post.kind, SpanKind.SERVER);
    assert.equal(post.parentSpanId, CALLER_SPAN, 'the incoming traceparent is the parent');
    assert.equal(post.attributes['http.response.status_code'], 202);
    const start = one('StartWorkflow:missionWorkflow', post);
    const run = one('RunWorkflow:missionWorkflow', start);
    // The workflow's spans name their workflow, and nothing more of its info (no memo, no search attributes).
    assert.deepEqual(run.attributes, {
      temporalWorkflowId: `mission-${missionId}`,
      run_id: start.attributes.run_id,
      temporalWorkflowType: 'missionWorkflow',
      temporalTaskQueue: stack.config.temporal.taskQueue,
    });
    const startModel = spans.filter((s) => s.name === 'StartActivity:callModel' && s.parentSpanId === run.spanContext().spanId);
    assert.equal(startModel.length, 2, 'two model calls scheduled by the workflow');
    const runModel = one('RunActivity:callModel', startModel[0]);
    const chat = spans.find((s) => s.name.startsWith('chat ') && s.parentSpanId === runModel.spanContext().spanId);
    assert.ok(chat, 'the model span runs inside the activity');
    const runTool = one('RunActivity:runTool', one('StartActivity:runTool', run));
    one('execute_tool lab.lookup', runTool);
  });

  it('describes the model call with the GenAI conventions', () => {
    const chat = spans.find((s) => s.name.startsWith('chat ') && s.attributes['gen_ai.usage.input_tokens'] === 321);
    assert.ok(chat, 'the first model call has its span');
    const model = stack.config.model.tiers.allegro;
    assert.equal(chat.name, `chat ${model}`);
    assert.equal(chat.kind, SpanKind.CLIENT);
    assert.equal(chat.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(chat.attributes['gen_ai.provider.name'], 'anthropic');
    assert.equal(chat.attributes['gen_ai.system'], 'anthropic');
    assert.equal(chat.attributes['gen_ai.request.model'], model);
    assert.equal(chat.attributes['gen_ai.usage.output_tokens'], 12);
    assert.deepEqual(chat.attributes['gen_ai.response.finish_reasons'], ['tool_use']);
    // The provider SDK's own span of the HTTP call (it follows the registered context) sits inside ours.
    one('anthropic.messages.create', chat);
  });

  it('names the tool and its outcome, and sends the tool the trace as traceparent', () => {
    const tool = one('execute_tool lab.lookup');
    assert.equal(tool.attributes['gen_ai.tool.name'], 'lab.lookup');
    assert.equal(tool.attributes['gen_ai.tool.call.id'], 'tu_1');
    assert.equal(tool.attributes['cadenza.tool.outcome'], 'completed');
    const call = stack.tools.requests.find((r) => r.tool === 'lookup');
    assert.equal(call?.headers.traceparent, `00-${TRACE_ID}-${tool.spanContext().spanId}-01`);
  });

  it('writes the trace id in the request log and the mission-ended log line', async () => {
    const lines = stack.logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = lines.find((l) => l.msg === 'request' && l.method === 'POST' && l.route === '/api/v1/missions');
    assert.equal(request?.traceId, TRACE_ID);
    await until(() => stack.logLines.some((l) => l.includes('mission ended')), { what: 'the mission-ended line' });
    const ended = stack.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'mission ended');
    assert.equal(ended?.missionId, missionId);
    assert.equal(ended?.traceId, TRACE_ID);
  });

  it('traces an approval as a trace of its own that reaches the workflow through the update’s headers', async () => {
    const approver = '0af7651916cd43dd8448eb211c80319c';
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'guarded', tools: ['lab.wipe'], maxTurns: 3 }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_w', name: 'lab__wipe', input: { target: 'x' } }] } }, { reply: { text: 'wiped' } });
    const { id } = await stack.api.startMission(key, { skill: 'guarded', objective: 'Wipe it.' });
    const status = async () => ((await stack.api.getMission(key, id)).body.tools as { status: string }[] | undefined)?.[0]?.status;
    await until(async () => (await status()) === 'awaiting_approval', { what: 'the wipe awaiting approval' });
    const res = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_w/approve`, {
      key,
      body: {},
      headers: { traceparent: `00-${approver}-${CALLER_SPAN}-01` },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    await until(
      async () => {
        await stack.tracing!.flush();
        return exporter
          .getFinishedSpans()
          .some((s) => s.name === 'RunWorkflow:missionWorkflow' && s.attributes.temporalWorkflowId === `mission-${id}`);
      },
      { what: 'the second mission’s workflow span exported' },
    );
    spans = exporter.getFinishedSpans();
    const post = one('POST /api/v1/missions/:id/tools/:toolUseId/approve');
    assert.equal(post.spanContext().traceId, approver);
    const handled = one('HandleUpdate:decideTool', one('StartWorkflowUpdate:decideTool', post));
    assert.equal(handled.spanContext().traceId, approver);
    // The call itself stays in the mission's trace: it runs from the workflow, not from the request.
    const wipe = one('execute_tool lab.wipe');
    const run = spans.find((s) => s.name === 'RunWorkflow:missionWorkflow' && s.attributes.temporalWorkflowId === `mission-${id}`)!;
    assert.equal(wipe.spanContext().traceId, run.spanContext().traceId);
    assert.notEqual(wipe.spanContext().traceId, approver);
  });

  it('adds no command: the traced history replays with and without the tracing interceptors', async () => {
    const history = await stack.handle(missionId).fetchHistory();
    const sinks = { ...IGNORED_PROGRESS_SINKS, exporter: { export: { fn: () => {} } } };
    await Worker.runReplayHistory({ workflowBundle: bundle, sinks }, history, 'traced');
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.CADENZA_TEST_BUNDLE! }, sinks }, history, 'untraced');
  });

  it('replays every recorded history with tracing turned on', async () => {
    const sinks = { ...IGNORED_PROGRESS_SINKS, exporter: { export: { fn: () => {} } } };
    for (const file of readdirSync(HISTORIES).filter((f) => f.endsWith('.pb'))) {
      const history = proto.temporal.api.history.v1.History.decode(readFileSync(`${HISTORIES}${file}`));
      await Worker.runReplayHistory({ workflowBundle: bundle, sinks }, history, file);
    }
  });
});

describe('tracing exported over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  type OtlpSpan = { traceId: string; name: string };
  const received: { service: string | undefined; spans: OtlpSpan[] }[] = [];
  const receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) {
        const body = JSON.parse(raw) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { spans: OtlpSpan[] }[];
          }[];
        };
        for (const rs of body.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
          received.push({ service, spans: rs.scopeSpans.flatMap((s) => s.spans) });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  let stack: TestStack | undefined;
  before(async () => {
    await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  });
  after(async () => {
    await stack?.stop();
    await new Promise((ok) => receiver.close(ok));
  });

  it('sends the mission’s spans, one trace, under OTEL_SERVICE_NAME, flushed at shutdown', async () => {
    const { port } = receiver.address() as { port: number };
    stack = await startTestStack({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'cadenza-test' },
      workflowBundle: await tracedBundle(),
    });
    await runLookupMission(stack);
    await stack.stop();
    stack = undefined;
    const spans = received.flatMap((r) => r.spans);
    assert.deepEqual(new Set(received.map((r) => r.service)), new Set(['cadenza-test']));
    const post = spans.find((s) => s.name === 'POST /api/v1/missions');
    assert.ok(post, `the HTTP span arrived: ${spans.map((s) => s.name).join(', ')}`);
    for (const name of ['StartWorkflow:missionWorkflow', 'RunWorkflow:missionWorkflow', 'RunActivity:runTool', 'execute_tool lab.lookup']) {
      const span = spans.find((s) => s.name === name);
      assert.ok(span, `${name} arrived`);
      assert.equal(span.traceId, post.traceId, `${name} is in the mission's trace`);
    }
  });
});
