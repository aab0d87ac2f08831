import type { ServerResponse } from 'node:http';
import type { StopReason } from '../model/model-types.ts';
import type { FakeProtocol, FakeReply, RecordedRequest, Step } from './fake-model-types.ts';
import { streamReply, type StreamPacing } from './stream-replies.ts';
import { anthropicUsage, openaiUsage, usageOf } from './usage.ts';

/** Writes the response `step` describes, in the protocol `record` arrived in. */
export function answer(
  res: ServerResponse,
  record: RecordedRequest,
  step: Exclude<Step, { hang: true } | { reset: true }>,
  nextId: () => number,
  pacing: Omit<StreamPacing, 'cutAfterChunks'>,
): void | Promise<void> {
  const streaming = (record.body as { stream?: unknown } | undefined)?.stream === true;
  // A JSON answer is text like any other (structured outputs put the JSON in the text block or the content).
  if ('reply' in step && step.reply.json !== undefined) step = { ...step, reply: { ...step.reply, text: JSON.stringify(step.reply.json) } };
  if ('reply' in step && streaming) {
    const cut = step.cutAfterChunks !== undefined ? { cutAfterChunks: step.cutAfterChunks } : {};
    const chunkDelayMs = step.chunkDelayMs ?? pacing.chunkDelayMs;
    return streamReply(res, record, step.reply, usageOf(record, step.reply), nextId, { ...pacing, chunkDelayMs, ...cut });
  }
  if ('reply' in step) {
    sendJson(res, 200, renderReply(record, step.reply, nextId));
  } else if ('malformed' in step && streaming) {
    // An event whose JSON is cut off, as a proxy that drops the tail of a frame would deliver it.
    const name = record.protocol === 'anthropic' ? 'event: message_start\n' : '';
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${name}data: {"type":"message_start","mess\n\n`);
  } else if ('malformed' in step) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(renderMalformed(record.protocol));
  } else {
    const body = step.body ?? renderError(record.protocol, step.status, step.message ?? defaultErrorMessage(step.status));
    sendJson(res, step.status, body, step.headers);
  }
}

/** Sends `body` as JSON (a string body is sent verbatim). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
}

/** The JSON body of a successful turn in the request's protocol; `nextId` numbers generated ids. */
function renderReply(request: RecordedRequest, reply: FakeReply, nextId: () => number): unknown {
  const toolUses = reply.toolUses ?? [];
  const stopReason: StopReason = reply.stopReason ?? (toolUses.length ? 'tool_use' : 'end_turn');
  const usage = usageOf(request, reply);
  const model = request.model ?? 'fake-model';
  if (request.protocol === 'anthropic') {
    return {
      id: `msg_fake_${nextId()}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [
        ...(reply.text !== undefined ? [{ type: 'text', text: reply.text }] : []),
        ...toolUses.map((t) => ({ type: 'tool_use', id: t.id ?? `toolu_${nextId()}`, name: t.name, input: t.input })),
      ],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: anthropicUsage(usage),
    };
  }
  const toolCalls = toolUses.map((t) => ({
    id: t.id ?? `call_${nextId()}`,
    type: 'function',
    function: { name: t.name, arguments: JSON.stringify(t.input) },
  }));
  return {
    id: `chatcmpl-fake-${nextId()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.text ?? null, refusal: null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: FINISH_REASONS[stopReason],
      },
    ],
    usage: openaiUsage(usage),
  };
}

const FINISH_REASONS: Record<StopReason, string> = {
  end_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  stop_sequence: 'stop',
};

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** An error body in the protocol's own shape. */
function renderError(protocol: FakeProtocol, status: number, message: string): unknown {
  if (protocol === 'anthropic') {
    const type = ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    return { type: 'error', error: { type, message } };
  }
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : null } };
}

/** A 200 body cut off mid-JSON, as a proxy that drops the connection's tail would deliver it. */
function renderMalformed(protocol: FakeProtocol): string {
  return protocol === 'anthropic' ? '{"id":"msg_fake","type":"message","content":[{"type":"te' : '{"id":"chatcmpl-fake","choices":[{"mess';
}

function defaultErrorMessage(status: number): string {
  if (status === 429) return 'Rate limit exceeded (fake model server)';
  if (status >= 500) return 'Internal server error (fake model server)';
  return `Request failed with status ${status} (fake model server)`;
}
