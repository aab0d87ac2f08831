import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createModelClient } from '../../model/create-model-client.ts';
import { ModelCallError } from '../../model/model-types.ts';
import type { ChatMessage, ModelClient, ModelRequest, ToolSpec } from '../../model/model-types.ts';
import { startFakeModelServer } from '../../fake-model/fake-model-server.ts';
import type { FakeModelServer } from '../../fake-model/fake-model-server.ts';

const TOOLS: ToolSpec[] = [
  { name: 'search', description: 'Search the web', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
  { name: 'read_file', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
];

const CONVERSATION: ChatMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'Find the report' }] },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Looking.' },
      { type: 'tool_use', id: 'tu_a', name: 'search', input: { q: 'report' } },
      { type: 'tool_use', id: 'tu_b', name: 'read_file', input: { path: '/r.txt' } },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'tu_a', content: 'found /r.txt' },
      { type: 'tool_result', tool_use_id: 'tu_b', content: 'permission denied', is_error: true },
      { type: 'text', text: 'Carry on' },
    ],
  },
];

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'test-model', system: 'You are terse.', messages: [CONVERSATION[0]!], maxTokens: 256, ...overrides };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return assert.fail('expected the call to reject');
}

async function modelCallError(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await rejection(promise);
  assert.ok(error instanceof ModelCallError, `expected ModelCallError, got ${String(error)}`);
  return error;
}

type Body = Record<string, unknown> & { messages: Array<Record<string, unknown>> };

for (const provider of ['anthropic', 'openai'] as const) {
  describe(`${provider} client against the fake model server`, () => {
    let server: FakeModelServer;
    let client: ModelClient;
    const body = (i = 0): Body => server.requests[i]!.body as Body;

    before(async () => {
      server = await startFakeModelServer();
      const baseUrl = provider === 'anthropic' ? server.anthropicBaseUrl : server.openaiBaseUrl;
      client = createModelClient({ provider, baseUrl, apiKey: 'test-key' });
    });
    beforeEach(() => server.reset());
    after(() => server.close());

    test('a tool_use turn round-trips names, ids, inputs, stop reason and usage', async () => {
      server.enqueue({
        reply: {
          text: 'Let me check.',
          toolUses: [
            { id: 'given_1', name: 'search', input: { q: 'cadenza', limit: 3 } },
            { name: 'read_file', input: { path: '/etc/hosts' } },
          ],
          usage: { inputTokens: 42, outputTokens: 17 },
        },
      });
      const response = await client.complete(request({ tools: TOOLS }));

      assert.equal(response.stopReason, 'tool_use');
      assert.deepEqual(response.usage, { inputTokens: 42, outputTokens: 17 });
      assert.equal(response.model, 'test-model');
      assert.deepEqual(response.content[0], { type: 'text', text: 'Let me check.' });
      assert.deepEqual(response.content[1], { type: 'tool_use', id: 'given_1', name: 'search', input: { q: 'cadenza', limit: 3 } });
      const generated = response.content[2];
      assert.ok(generated?.type === 'tool_use');
      assert.equal(generated.name, 'read_file');
      assert.deepEqual(generated.input, { path: '/etc/hosts' });
      assert.match(generated.id, provider === 'anthropic' ? /^toolu_/ : /^call_/);

      const recorded = server.requests[0]!;
      assert.equal(server.requests.length, 1);
      assert.equal(recorded.protocol, provider);
      assert.equal(recorded.model, 'test-model');
      assert.deepEqual(recorded.toolNames, ['search', 'read_file']);
      assert.equal(recorded.lastUserText, 'Find the report');
      if (provider === 'anthropic') {
        assert.equal(recorded.path, '/v1/messages');
        assert.deepEqual(
          body().system,
          [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
          'the system prompt is a cache breakpoint',
        );
        assert.equal(body().max_tokens, 256);
        assert.deepEqual((body().tools as unknown[])[0], {
          name: 'search',
          description: 'Search the web',
          input_schema: TOOLS[0]!.inputSchema,
        });
      } else {
        assert.equal(recorded.path, '/v1/chat/completions');
        assert.deepEqual(body().messages[0], { role: 'system', content: 'You are terse.' });
        assert.equal(body().max_completion_tokens, 256);
        assert.deepEqual((body().tools as unknown[])[0], {
          type: 'function',
          function: { name: 'search', description: 'Search the web', parameters: TOOLS[0]!.inputSchema },
        });
      }
    });

    test("tool results go back in the provider's shape", async () => {
      const response = await client.complete(request({ messages: CONVERSATION, tools: TOOLS }));
      assert.deepEqual(response.content, [{ type: 'text', text: 'fake answer' }]);
      assert.equal(response.stopReason, 'end_turn');

      const recorded = server.requests[0]!;
      assert.deepEqual(recorded.toolResults, [
        { toolUseId: 'tu_a', content: 'found /r.txt', isError: false },
        { toolUseId: 'tu_b', content: provider === 'anthropic' ? 'permission denied' : 'ERROR: permission denied', isError: true },
      ]);
      assert.equal(recorded.lastUserText, 'Carry on');
      const messages = body().messages;
      if (provider === 'anthropic') {
        assert.deepEqual(messages[1]!.content, CONVERSATION[1]!.content);
        assert.deepEqual(messages[2]!.content, [
          { type: 'tool_result', tool_use_id: 'tu_a', content: 'found /r.txt' },
          { type: 'tool_result', tool_use_id: 'tu_b', content: 'permission denied', is_error: true },
          { type: 'text', text: 'Carry on', cache_control: { type: 'ephemeral' } },
        ]);
        // The breakpoints: the user message the previous call ended with, and this call's last one.
        assert.deepEqual(messages[0]!.content, [{ type: 'text', text: 'Find the report', cache_control: { type: 'ephemeral' } }]);
      } else {
        assert.deepEqual(
          messages.map((m) => m.role),
          ['system', 'user', 'assistant', 'tool', 'tool', 'user'],
        );
        assert.deepEqual(messages[2], {
          role: 'assistant',
          content: 'Looking.',
          tool_calls: [
            { id: 'tu_a', type: 'function', function: { name: 'search', arguments: '{"q":"report"}' } },
            { id: 'tu_b', type: 'function', function: { name: 'read_file', arguments: '{"path":"/r.txt"}' } },
          ],
        });
        assert.deepEqual(messages[3], { role: 'tool', tool_call_id: 'tu_a', content: 'found /r.txt' });
        assert.deepEqual(messages[4], { role: 'tool', tool_call_id: 'tu_b', content: 'ERROR: permission denied' });
        assert.deepEqual(messages[5], { role: 'user', content: 'Carry on' });
      }
    });

    test('no tools field is sent when no tools are offered', async () => {
      await client.complete(request());
      await client.complete(request({ tools: [] }));
      assert.equal(server.requests.length, 2);
      for (const recorded of server.requests) {
        assert.equal('tools' in (recorded.body as object), false);
        assert.deepEqual(recorded.toolNames, []);
      }
    });

    test('a max_tokens stop is reported as such', async () => {
      server.enqueue({ reply: { text: 'truncat', stopReason: 'max_tokens' } });
      const response = await client.complete(request());
      assert.equal(response.stopReason, 'max_tokens');
    });

    test('429 with Retry-After: 1 is rate_limited, retryable, after 1000 ms, in one request', async () => {
      server.enqueue({ status: 429, headers: { 'Retry-After': '1' } });
      const error = await modelCallError(client.complete(request()));
      assert.equal(error.kind, 'rate_limited');
      assert.equal(error.status, 429);
      assert.equal(error.retryable, true);
      assert.equal(error.retryAfterMs, 1000);
      assert.equal(server.requests.length, 1);
    });

    test('429 honours retry-after-ms', async () => {
      server.enqueue({ status: 429, headers: { 'retry-after-ms': '250', 'Retry-After': '1' } });
      const error = await modelCallError(client.complete(request()));
      assert.equal(error.retryAfterMs, 250);
    });

    test('429 without a header has no retryAfterMs', async () => {
      server.enqueue({ status: 429 });
      const error = await modelCallError(client.complete(request()));
      assert.equal(error.kind, 'rate_limited');
      assert.equal(error.retryable, true);
      assert.equal(error.retryAfterMs, undefined);
    });

    test('500 is a retryable server_error, not retried by the SDK', async () => {
      server.enqueue({ status: 500 }, { reply: { text: 'must not be reached' } });
      const error = await modelCallError(client.complete(request()));
      assert.equal(error.kind, 'server_error');
      assert.equal(error.status, 500);
      assert.equal(error.retryable, true);
      assert.equal(server.requests.length, 1);
    });

    test('408 and 409 are retryable', async () => {
      for (const status of [408, 409]) {
        server.enqueue({ status });
        const error = await modelCallError(client.complete(request()));
        assert.equal(error.retryable, true, `status ${status}`);
        assert.equal(error.kind, 'server_error');
      }
    });

    test('400 is a non-retryable client_error naming the status and the provider message', async () => {
      server.enqueue({ status: 400, message: 'max_tokens: 999999 exceeds the model limit' });
      const error = await modelCallError(client.complete(request()));
      assert.equal(error.kind, 'client_error');
      assert.equal(error.retryable, false);
      assert.equal(error.status, 400);
      assert.match(error.message, /400/);
      assert.match(error.message, /max_tokens: 999999 exceeds the model limit/);
      assert.equal(server.requests.length, 1);
    });

    test('aborting a hung request rejects with the abort reason and the server sees the disconnect', async () => {
      server.enqueue({ hang: true });
      const controller = new AbortController();
      const pending = client.complete(request({ signal: controller.signal }));
      await server.waitFor(() => server.requests.length === 1);
      const reason = new Error('activity cancelled');
      controller.abort(reason);
      assert.equal(await rejection(pending), reason);
      await server.waitFor(() => server.requests[0]!.finishedAt !== undefined);
      assert.equal(server.requests[0]!.aborted, true);
      assert.equal(server.inFlight, 0);
    });

    test('a malformed body is a retryable malformed error', async () => {
      server.enqueue({ malformed: true });
      const error = await modelCallError(client.complete(request()));
      assert.equal(error.kind, 'malformed');
      assert.equal(error.retryable, true);
    });

    test('a successful request is recorded as not aborted', async () => {
      await client.complete(request());
      await server.waitFor(() => server.requests[0]?.finishedAt !== undefined);
      assert.equal(server.requests[0]!.aborted, false);
    });
  });
}

describe('model clients, provider-specific cases', () => {
  let server: FakeModelServer;
  before(async () => (server = await startFakeModelServer()));
  beforeEach(() => server.reset());
  after(() => server.close());

  test('a refused connection is a retryable network error for both providers', async () => {
    const dead = await startFakeModelServer();
    await dead.close();
    for (const [provider, baseUrl] of [
      ['anthropic', dead.anthropicBaseUrl],
      ['openai', dead.openaiBaseUrl],
    ] as const) {
      const error = await modelCallError(createModelClient({ provider, baseUrl, apiKey: 'k' }).complete(request()));
      assert.equal(error.kind, 'network', provider);
      assert.equal(error.retryable, true, provider);
    }
  });

  test('a connection reset before any answer is sent once more at once, for both providers; a second reset fails the call', async () => {
    for (const [provider, baseUrl] of [
      ['anthropic', server.anthropicBaseUrl],
      ['openai', server.openaiBaseUrl],
    ] as const) {
      server.reset();
      const client = createModelClient({ provider, baseUrl, apiKey: 'k' });
      server.enqueue({ reset: true });
      server.enqueue({ reply: { text: 'after the reset' } });
      const response = await client.complete(request());
      assert.deepEqual(response.content, [{ type: 'text', text: 'after the reset' }], provider);
      assert.equal(server.requests.length, 2, `${provider}: the request sent twice, in one call`);
      server.enqueue({ reset: true }, { reset: true }, { reply: { text: 'never asked' } });
      const error = await modelCallError(client.complete(request()));
      assert.equal(error.kind, 'network', provider);
      assert.equal(server.requests.length, 4, `${provider}: one resend only`);
    }
  });

  test('OpenAI tool-call arguments that are not JSON are a retryable malformed error', async () => {
    server.enqueue({
      status: 200,
      body: {
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q": ' } }],
            },
          },
        ],
      },
    });
    const client = createModelClient({ provider: 'openai', baseUrl: server.openaiBaseUrl, apiKey: 'k' });
    const error = await modelCallError(client.complete(request({ tools: TOOLS })));
    assert.equal(error.kind, 'malformed');
    assert.equal(error.retryable, true);
  });

  test('openai-compatible sends max_tokens, to the given base URL, without needing an API key', async () => {
    const client = createModelClient({ provider: 'openai-compatible', baseUrl: server.openaiBaseUrl });
    const response = await client.complete(request());
    assert.equal(response.stopReason, 'end_turn');
    const body = server.requests[0]!.body as Record<string, unknown>;
    assert.equal(body.max_tokens, 256);
    assert.equal('max_completion_tokens' in body, false);
  });
});

describe('fake model server scripting', () => {
  let server: FakeModelServer;
  let client: ModelClient;
  before(async () => {
    server = await startFakeModelServer();
    client = createModelClient({ provider: 'anthropic', baseUrl: server.anthropicBaseUrl, apiKey: 'k' });
  });
  beforeEach(() => server.reset());
  after(() => server.close());

  test('queued steps come first, then the handler answers', async () => {
    server.enqueue({ reply: { text: 'queued' } });
    server.setHandler((req) => ({ reply: { text: `echo: ${req.lastUserText}` } }));
    const first = await client.complete(request());
    const second = await client.complete(request());
    assert.deepEqual(first.content, [{ type: 'text', text: 'queued' }]);
    assert.deepEqual(second.content, [{ type: 'text', text: 'echo: Find the report' }]);
  });

  test('concurrent requests are counted in flight', async () => {
    // Hold every reply until all three requests are being answered at once.
    server.setHandler(async () => {
      await server.waitFor(() => server.inFlight === 3);
      return { reply: { text: 'done' }, delayMs: 5 };
    });
    await Promise.all([client.complete(request()), client.complete(request()), client.complete(request())]);
    assert.equal(server.maxInFlight, 3);
    await server.waitFor(() => server.inFlight === 0);
    assert.equal(server.requests.length, 3);
  });

  test('close() drops a hung connection, which the client sees as a network error', async () => {
    const doomed = await startFakeModelServer();
    doomed.enqueue({ hang: true });
    const dClient = createModelClient({ provider: 'openai', baseUrl: doomed.openaiBaseUrl, apiKey: 'k' });
    const pending = dClient.complete(request());
    await doomed.waitFor(() => doomed.requests.length === 1);
    await doomed.close();
    const error = await modelCallError(pending);
    assert.equal(error.kind, 'network');
    assert.equal(doomed.requests[0]!.aborted, true);
  });
});
