// A tool the mission's caller runs (`runs: client`): the form that sends its result while the call waits
// (POST /missions/:id/tools/:toolUseId/result). The mission goes on once it is accepted; its tool_end follows.
import { api } from './api.js';
import { errorBox, formatTime, h } from './dom.js';

/** The result form of the waiting call `e` (a `client_tool_call` event) of mission `id`; errors go to `detail`. */
export function clientToolForm(id, e, detail) {
  const output = h('textarea', { class: 'source', 'aria-label': `Output of ${e.tool}`, spellcheck: 'false' }, '{}');
  output.style.minHeight = '80px';
  const reason = h('input', { 'aria-label': `Error of ${e.tool}`, placeholder: 'Why it failed', maxlength: 10000 });
  const send = h('button', { type: 'button', class: 'small' }, 'Send result');
  const fail = h('button', { type: 'button', class: 'small danger' }, 'Send error');
  const submit = async (body) => {
    send.disabled = fail.disabled = true;
    try {
      await api(`/missions/${id}/tools/${encodeURIComponent(e.toolUseId)}/result`, { method: 'POST', body });
      detail.replaceChildren(h('span', { class: 'muted' }, 'Result sent'));
    } catch (err) {
      send.disabled = fail.disabled = false;
      detail.replaceChildren(errorBox(err));
    }
  };
  send.addEventListener('click', () => {
    let parsed;
    try {
      parsed = JSON.parse(output.value);
    } catch {
      detail.replaceChildren(errorBox(new Error('The output is not valid JSON.')));
      return;
    }
    void submit({ output: parsed });
  });
  fail.addEventListener('click', () => {
    if (!reason.value.trim()) {
      detail.replaceChildren(errorBox(new Error('Say why the tool failed.')));
      return;
    }
    void submit({ error: reason.value.trim() });
  });
  return h(
    'div',
    { class: 'detail', role: 'group', 'aria-label': `Result of ${e.tool}` },
    h('p', {}, `Waits for your result until ${formatTime(e.deadline)}. Input:`),
    h('pre', { class: 'source' }, JSON.stringify(e.input, null, 2)),
    output,
    h('div', { class: 'row' }, send, reason, fail),
  );
}
