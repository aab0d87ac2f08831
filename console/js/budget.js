// A mission paused at its budget (`budgetPolicy: "pause"`): what it spent, and the control that raises the budget so
// it goes on (PATCH /missions/:id).
import { api } from './api.js';
import { announce, errorBox, h } from './dom.js';

/** The raise-budget form of mission `id`; `reached(e)` fills it from a `budget_reached` event. Shown while paused. */
export function budgetBox(id) {
  const said = h('p', {});
  const tokens = h('input', { type: 'number', id: 'budget-tokens', min: 1, step: 1, inputmode: 'numeric' });
  const cost = h('input', { type: 'number', id: 'budget-cost', min: 0.000001, step: 'any', inputmode: 'decimal' });
  const raise = h('button', { type: 'submit' }, 'Raise budget');
  const note = h('p', { class: 'muted', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Budget' },
    h('h2', {}, 'Paused at its budget'),
    said,
    h(
      'div',
      { class: 'row' },
      h('label', { for: 'budget-tokens' }, 'Max tokens'),
      tokens,
      h('label', { for: 'budget-cost' }, 'Max cost (USD)'),
      cost,
    ),
    h('div', { class: 'row' }, raise),
    note,
  );
  form.hidden = true;
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = {
      ...(tokens.value ? { maxTokens: Number(tokens.value) } : {}),
      ...(cost.value ? { maxCostUsd: Number(cost.value) } : {}),
    };
    note.replaceChildren();
    try {
      await api(`/missions/${id}`, { method: 'PATCH', body });
      note.textContent = 'Budget raised: the mission goes on once its next call fits';
      announce(note.textContent);
    } catch (err) {
      note.replaceChildren(errorBox(err));
    }
  });
  return Object.assign(form, {
    reached(e) {
      const limit = [
        e.budget.maxTokens !== undefined ? `${e.budget.maxTokens} tokens` : '',
        e.budget.maxCostUsd !== undefined ? `$${e.budget.maxCostUsd}` : '',
      ].filter(Boolean);
      said.textContent = `Spent ${e.spent.tokens} tokens ($${e.spent.costUsd.toFixed(4)}) of ${limit.join(' and ')}; its next call would not fit.`;
      if (e.budget.maxTokens !== undefined) tokens.value = String(e.budget.maxTokens * 2);
      if (e.budget.maxCostUsd !== undefined) cost.value = String(e.budget.maxCostUsd * 2);
    },
  });
}
