import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createProgressView } from '../../cli/progress-view.ts';

const sink = () => {
  let text = '';
  return { out: { write: (s: string) => ((text += s), true) } as unknown as NodeJS.WriteStream, text: () => text };
};
const ev = (type: string, data: Record<string, unknown>) => ({ id: undefined, type, data: { type, ...data } });

describe('the CLI progress view', () => {
  it('streams text_delta text inline, ends the line before the next one, and voids it on reset', () => {
    const s = sink();
    const view = createProgressView(s.out, { tty: false });
    view.event(ev('turn', { turn: 1 }));
    view.event(ev('text_delta', { turn: 1, text: 'Hel' }));
    view.event(ev('reset', { turn: 1 }));
    view.event(ev('text_delta', { turn: 1, text: 'Hello ' }));
    view.event(ev('text_delta', { turn: 1, text: 'world' }));
    assert.equal(view.streamedText(), 'Hello world');
    view.event(ev('tool_start', { toolUseId: 't1', tool: 'lab.scan', turn: 1 }));
    view.event(ev('tool_end', { toolUseId: 't1', tool: 'lab.scan', status: 'error', durationMs: 2300, error: 'boom' }));
    view.stop();
    assert.equal(
      s.text().replace(/\x1b\[\d*m/g, ''),
      'Turn 1\nHel\n(retrying the model call)\nHello world\n  … lab.scan t1 started\n  ✗ lab.scan t1  2.3s error: boom\n',
    );
  });
});
