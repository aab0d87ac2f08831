import type { ServerResponse } from 'node:http';
import type { ModelUsage, StopReason } from '../model/model-types.ts';
import type { FakeReply, RecordedRequest } from './fake-model-types.ts';
import { anthropicUsage, openaiUsage } from './usage.ts';

/** How a streamed reply is sent: the pause between chunks, and where to drop the connection (a failed attempt). */
export type StreamPacing = { chunkDelayMs: number; cutAfterChunks?: number; sleep: (ms: number) => Promise<void> };

/**
 * Streams a successful turn as the provider's Server-Sent Events (Anthropic Messages events or OpenAI chat completion
 * chunks): the text in word-sized deltas, then the tool calls, then the stop reason and usage.
 */
export async function streamReply(
  res: ServerResponse,
  record: RecordedRequest,
  reply: FakeReply,
  usage: ModelUsage,
  nextId: () => number,
  pacing: StreamPacing,
): Promise<void> {
  const toolUses = reply.toolUses ?? [];
  const stopReason: StopReason = reply.stopReason ?? (toolUses.length ? 'tool_use' : 'end_turn');
  const model = record.model ?? 'fake-model';
  const pieces = (reply.text ?? '').match(/\s*\S+\s*/g) ?? (reply.text ? [reply.text] : []);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  /** Writes one text chunk after the pause; false once the connection is gone (or cut on purpose). */
  const textChunk = async (frame: string): Promise<boolean> => {
    if (sent > 0) await pacing.sleep(pacing.chunkDelayMs);
    if (res.destroyed) return false;
    if (pacing.cutAfterChunks !== undefined && sent >= pacing.cutAfterChunks) {
      res.destroy();
      return false;
    }
    res.write(frame);
    record.firstTextAt ??= Date.now();
    sent += 1;
    return true;
  };
  if (record.protocol === 'anthropic') {
    const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    res.write(
      event('message_start', {
        message: {
          ...{ id: `msg_fake_${nextId()}`, type: 'message', role: 'assistant', model, content: [] },
          ...{ stop_reason: null, stop_sequence: null, usage: anthropicUsage(usage, 1) },
        },
      }),
    );
    let index = 0;
    if (reply.text !== undefined) {
      res.write(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const text of pieces)
        if (!(await textChunk(event('content_block_delta', { index, delta: { type: 'text_delta', text } })))) return;
      res.write(event('content_block_stop', { index }));
      index += 1;
    }
    for (const t of toolUses) {
      const id = t.id ?? `toolu_${nextId()}`;
      res.write(event('content_block_start', { index, content_block: { type: 'tool_use', id, name: t.name, input: {} } }));
      res.write(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(t.input) } }));
      res.write(event('content_block_stop', { index }));
      index += 1;
    }
    res.write(
      event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.outputTokens } }),
    );
    res.end(event('message_stop', {}));
    return;
  }
  const id = `chatcmpl-fake-${nextId()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: 'assistant', content: '' }));
  for (const text of pieces) if (!(await textChunk(chunk({ content: text })))) return;
  toolUses.forEach((t, i) => {
    const call = {
      index: i,
      id: t.id ?? `call_${nextId()}`,
      type: 'function',
      function: { name: t.name, arguments: JSON.stringify(t.input) },
    };
    res.write(chunk({ tool_calls: [call] }));
  });
  res.write(chunk({}, FINISH_REASONS[stopReason]));
  const body = record.body as { stream_options?: { include_usage?: boolean } } | undefined;
  if (body?.stream_options?.include_usage) {
    const u = openaiUsage(usage);
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: u })}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

const FINISH_REASONS: Record<StopReason, string> = {
  end_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  stop_sequence: 'stop',
};
