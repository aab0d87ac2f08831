// The review page's eval card: the latest eval run of the version under review (pass rates, the delta, a row per
// case with the failing expectation and both missions) and a button that runs one against the active version.
import { api } from './api.js';
import { announce, errorBox, fill, h, pill } from './dom.js';

const POLL_MS = 1000;

/** The card for one version of a skill; null when the version has no eval cases and no run. */
export async function evalsCard(ctx, skill) {
  if (!skill.evalCases && !skill.latestEvalRunId) return null;
  const card = h('section', { class: 'card', 'aria-label': 'Evals' });
  const problems = h('div');
  const budget = h('input', { id: 'eval-budget', type: 'number', min: '0.01', step: '0.01', value: '1' });

  async function render(runId) {
    const run = runId ? await api(`/eval-runs/${runId}`) : undefined;
    const button = h('button', { type: 'button', id: 'eval-run' }, 'Run eval');
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const started = await api(`/skills/${skill.id}/evals`, {
          method: 'POST',
          body: { version: skill.version, maxCostUsd: Number(budget.value) },
        });
        announce('Eval run started');
        await render(started.evalRunId);
      } catch (err) {
        button.disabled = false;
        fill(problems, errorBox(err));
      }
    });
    fill(
      card,
      h('h2', {}, `Evals of v${skill.version}`),
      h('p', { class: 'muted' }, `${skill.evalCases} case${skill.evalCases === 1 ? '' : 's'} in evals/evals.json`),
      run ? summary(run) : h('p', {}, 'No eval run yet.'),
      ctx.can('mission.run') && skill.evalCases
        ? h('p', { class: 'row' }, h('label', { for: 'eval-budget' }, 'Budget (USD)'), budget, button)
        : null,
      problems,
    );
    if (run?.status === 'running') setTimeout(() => card.isConnected && void render(run.id), POLL_MS);
  }
  await render(skill.latestEvalRunId);
  return card;
}

function summary(run) {
  const baseline = run.baseline.kind === 'none' ? 'no skill' : `v${run.baseline.version}`;
  const rate = (side) => `${side.passed}/${side.graded} passed (${Math.round(side.passRate * 100)} %)`;
  return h(
    'div',
    { id: 'eval-summary' },
    h('p', { class: 'row' }, pill(run.status), `against ${baseline} · ${run.progress.graded}/${run.progress.total} graded`),
    h(
      'dl',
      {},
      h('dt', {}, 'This version'),
      h('dd', {}, rate(run.candidate)),
      h('dt', {}, 'Baseline'),
      h('dd', {}, rate(run.baselineFigures)),
      h('dt', {}, 'Delta'),
      h('dd', { id: 'eval-delta' }, `${run.delta.passRate > 0 ? '+' : ''}${run.delta.passRate} (± ${run.delta.overRepeats.stddev})`),
    ),
    h(
      'table',
      { 'aria-label': 'Eval cases' },
      h('thead', {}, h('tr', {}, ...['Case', 'Repeat', 'This version', 'Baseline', 'Failing'].map((t) => h('th', {}, t)))),
      h(
        'tbody',
        {},
        run.cases.map((c) => {
          const failing = c.candidate.failing[0] ?? c.baseline.failing[0];
          const side = (u) => (u.mission ? h('a', { href: `#/missions/${u.mission.split('/').at(-1)}` }, u.status) : u.status);
          return h(
            'tr',
            {},
            h('td', {}, c.caseId),
            h('td', {}, String(c.repeat)),
            h('td', {}, side(c.candidate)),
            h('td', {}, side(c.baseline)),
            h('td', {}, failing ? `${failing.text}${failing.reason ? `: ${failing.reason}` : ''}` : ''),
          );
        }),
      ),
    ),
  );
}
