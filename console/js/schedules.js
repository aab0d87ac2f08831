// Schedules: the caller's list, the create form, and one schedule's page (state, next runs, actions, its runs).
import { api } from './api.js';
import { announce, errorBox, fill, formatTime, h, pill } from './dom.js';

const timing = (s) => `${s.spec.cron ? `cron ${s.spec.cron}` : `every ${s.spec.every}`} (${s.spec.timezone})`;
const state = (paused) => pill(paused ? 'paused' : 'active');

export async function schedulesView(ctx) {
  const { view } = ctx;
  const { items } = await api('/schedules?limit=100');
  fill(
    view,
    h('h1', {}, 'Schedules'),
    ctx.can('mission.run') ? await createForm() : null,
    h('h2', {}, 'Your schedules'),
    h(
      'table',
      { 'aria-label': 'Schedules' },
      h('thead', {}, h('tr', {}, h('th', {}, 'State'), h('th', {}, 'Skill'), h('th', {}, 'Objective'), h('th', {}, 'Timing'))),
      h(
        'tbody',
        {},
        items.length === 0 ? h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No schedules yet.')) : null,
        items.map((s) =>
          h(
            'tr',
            { dataset: { scheduleId: s.id } },
            h('td', {}, state(s.paused)),
            h('td', {}, s.skill),
            h('td', { class: 'objective' }, h('a', { href: `#/schedules/${s.id}` }, s.objective)),
            h('td', {}, timing(s)),
          ),
        ),
      ),
    ),
  );
}

async function createForm() {
  const { items } = await api('/skills?status=active');
  const skill = h(
    'select',
    { id: 'schedule-skill', required: true },
    items.map((s) => h('option', { value: s.name }, s.name)),
  );
  const objective = h('textarea', { id: 'schedule-objective', required: true, maxlength: 20000 });
  const workspace = h('input', { id: 'schedule-workspace', required: true, value: 'console', maxlength: 128 });
  const every = h('input', { id: 'schedule-every', placeholder: '1h, 30m, 1d' });
  const cron = h('input', { id: 'schedule-cron', placeholder: '0 9 * * 1-5' });
  const zone = h('input', { id: 'schedule-timezone', value: 'UTC' });
  const paused = h('input', { type: 'checkbox', id: 'schedule-paused' });
  const problems = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'schedule-title' },
    h('h2', { id: 'schedule-title' }, 'New schedule'),
    h('label', { for: 'schedule-skill' }, 'Skill'),
    skill,
    h('label', { for: 'schedule-objective' }, 'Objective'),
    objective,
    h('label', { for: 'schedule-workspace' }, 'Workspace'),
    workspace,
    h('label', { for: 'schedule-every' }, 'Every (or a cron below)'),
    every,
    h('label', { for: 'schedule-cron' }, 'Cron'),
    cron,
    h('label', { for: 'schedule-timezone' }, 'Time zone'),
    zone,
    h('p', {}, h('label', { for: 'schedule-paused' }, paused, ' Start paused')),
    problems,
    h('p', {}, h('button', { type: 'submit' }, 'Create schedule')),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const made = await api('/schedules', {
        method: 'POST',
        body: {
          skill: skill.value,
          objective: objective.value,
          workspaceCode: workspace.value,
          ...(every.value.trim() ? { every: every.value.trim() } : {}),
          ...(cron.value.trim() ? { cron: cron.value.trim() } : {}),
          timezone: zone.value.trim() || 'UTC',
          ...(paused.checked ? { paused: true } : {}),
        },
      });
      location.hash = `#/schedules/${made.id}`;
    } catch (err) {
      fill(problems, errorBox(err));
    }
  });
  return form;
}

/** One schedule, read again every few seconds while the page is open (its runs come in). */
export async function scheduleView(ctx, id) {
  const { view, signal } = ctx;
  const head = h('div', { class: 'card' });
  const runs = h('tbody');
  const problems = h('div');
  fill(
    view,
    h('p', {}, h('a', { href: '#/schedules' }, '← Schedules')),
    head,
    problems,
    h('h2', {}, 'Runs'),
    h(
      'table',
      { 'aria-label': 'Runs' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Scheduled'), h('th', {}, 'Outcome'), h('th', {}, 'Mission'))),
      runs,
    ),
  );
  const act = async (what, said) => {
    problems.replaceChildren();
    try {
      if (what === 'delete') {
        await api(`/schedules/${id}`, { method: 'DELETE' });
        location.hash = '#/schedules';
        return;
      }
      await api(`/schedules/${id}/${what}`, { method: 'POST' });
      announce(said);
      await show();
    } catch (err) {
      problems.replaceChildren(errorBox(err));
    }
  };
  const button = (label, what, said, cls = 'small') => {
    const b = h('button', { type: 'button', class: cls }, label);
    b.addEventListener('click', () => void act(what, said));
    return b;
  };
  async function show() {
    const s = await api(`/schedules/${id}`);
    const actions = ctx.can('mission.run')
      ? h(
          'div',
          { class: 'row' },
          s.paused ? button('Resume', 'unpause', 'Schedule resumed') : button('Pause', 'pause', 'Schedule paused'),
          button('Run now', 'trigger', 'A run was started'),
          button('Delete', 'delete', 'Schedule deleted', 'small danger'),
        )
      : null;
    fill(
      head,
      h('div', { class: 'row spread' }, h('h1', {}, `Schedule · ${s.skill}`), h('div', { class: 'row' }, state(s.paused), actions)),
      h('p', {}, s.objective),
      h('p', { class: 'muted' }, `${timing(s)} · overlap ${s.overlap.replace('_', ' ')} · ${s.actions.taken} runs taken`),
      s.nextRunTimes.length
        ? h(
            'p',
            { class: 'muted' },
            `${s.paused ? 'Paused; once resumed, next' : 'Next'}: ${s.nextRunTimes.slice(0, 3).map(formatTime).join(' · ')}`,
          )
        : h('p', { class: 'muted' }, 'No run ahead.'),
    );
    fill(
      runs,
      s.runs.length === 0 ? h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'No runs yet.')) : null,
      s.runs.map((r) =>
        h(
          'tr',
          {},
          h('td', {}, formatTime(r.scheduledAt)),
          h('td', {}, pill(r.outcome)),
          h('td', {}, r.missionId ? h('a', { href: `#/missions/${r.missionId}` }, r.missionId.slice(0, 8)) : (r.reason ?? '')),
        ),
      ),
    );
  }
  while (!signal.aborted) {
    await show();
    await new Promise((ok) => {
      const t = setTimeout(ok, 3_000);
      signal.addEventListener('abort', () => (clearTimeout(t), ok()), { once: true });
    });
  }
}
