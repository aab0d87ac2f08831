// Talking to a mission: the message box (send at the next turn, or interrupt now) and a session's close; the timeline
// rows of delivered messages and of each exchange's answer.
import { api } from './api.js';
import { announce, errorBox, h, markdown } from './dom.js';

/** The message box of mission `id`; `session` adds the close button. Hidden by the caller once the mission ended. */
export function messageBox(id, { session }) {
  const text = h('textarea', { id: 'message-text', maxlength: 20000, required: true, placeholder: 'Say something to the mission' });
  const stopTools = h('input', { type: 'checkbox', id: 'message-stop-tools' });
  const send = h('button', { type: 'submit' }, 'Send');
  const interrupt = h('button', { type: 'button', class: 'danger' }, 'Interrupt');
  const close = h('button', { type: 'button', class: 'small' }, 'Close session');
  close.hidden = !session;
  const note = h('p', { class: 'muted', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Talk to the mission' },
    h('label', { for: 'message-text' }, 'Message'),
    text,
    h('div', { class: 'row' }, send, interrupt, h('label', { for: 'message-stop-tools' }, stopTools, ' and stop running tools'), close),
    note,
  );
  const post = async (path, body) => {
    note.replaceChildren();
    try {
      return await api(`/missions/${id}/${path}`, { method: 'POST', body });
    } catch (err) {
      note.replaceChildren(errorBox(err));
      return undefined;
    }
  };
  const sendAs = async (mode) => {
    if (!text.value.trim()) return void note.replaceChildren(errorBox(new Error('Write a message first.')));
    const body = { text: text.value, mode, ...(mode === 'interrupt' && stopTools.checked ? { cancelTools: true } : {}) };
    const reply = await post('messages', body);
    if (!reply) return;
    text.value = '';
    const said = mode === 'interrupt' ? 'Interrupting: the next turn starts with your message' : `Queued (position ${reply.position})`;
    note.textContent = said;
    announce(said);
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void sendAs('queue');
  });
  interrupt.addEventListener('click', () => void sendAs('interrupt'));
  close.addEventListener('click', async () => {
    if (await post('close')) announce('Closing the session');
  });
  return form;
}

/** A delivered message, in the timeline where the model read it. */
export const messageRow = (e) =>
  h(
    'li',
    { class: 'message', dataset: { seq: e.seq, messageId: e.messageId } },
    h('span', { class: 'name' }, e.mode === 'interrupt' ? 'You (interrupt)' : 'You'),
    ' ',
    e.text,
  );

/** Exchange `n`'s answer as a timeline row, in place at once and filled from the mission (its `exchanges`, oldest first). */
export function exchangeRow(id, n) {
  const row = h('li', { class: 'answer', dataset: { exchange: n } }, h('strong', {}, `Answer ${n}`));
  void api(`/missions/${id}`).then(
    ({ exchanges = [] }) => {
      const answer = exchanges[n - 1];
      if (!answer) return;
      if (answer.stoppedBy !== 'answer') row.firstChild.textContent += ` (stopped by ${answer.stoppedBy.replace('_', ' ')})`;
      row.append(markdown(answer.text));
    },
    (err) => row.append(errorBox(err)),
  );
  return row;
}
