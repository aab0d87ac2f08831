// The console's shell: sign-in, navigation and a hash router. Each route renders into its own element in `main#view`.
import { api, ApiError, session } from './api.js';
import { errorBox, fill, h } from './dom.js';
import { missionsView, missionView } from './missions.js';
import { skillsView, skillView } from './skills.js';
import { schedulesView, scheduleView } from './schedules.js';

const view = document.getElementById('view');
let current = { abort: new AbortController() };
/** Who the key acts for: `{tenantId, userId, capabilities, temporal}` from GET /me. */
export let me;

const routes = [
  [/^#\/missions\/([\w-]+)$/, (m, ctx) => missionView(ctx, m[1])],
  [/^#\/missions$/, (_m, ctx) => missionsView(ctx)],
  [/^#\/skills\/([\w-]+)$/, (m, ctx) => skillView(ctx, m[1])],
  [/^#\/skills$/, (_m, ctx) => skillsView(ctx)],
  [/^#\/schedules\/([\w-]+)$/, (m, ctx) => scheduleView(ctx, m[1])],
  [/^#\/schedules$/, (_m, ctx) => schedulesView(ctx)],
];

async function route() {
  current.abort.abort();
  current = { abort: new AbortController() };
  if (!session.key || !me) return signIn();
  const hash = location.hash || '#/missions';
  for (const a of document.querySelectorAll('[data-nav]')) {
    a.toggleAttribute('aria-current', hash.startsWith(`#/${a.dataset.nav}`));
    if (a.hasAttribute('aria-current')) a.setAttribute('aria-current', 'page');
  }
  // Each route renders into its own element: a view still awaiting its data when the route changes writes into a
  // detached one, never over the next view (its signal is aborted too, for what it fetches and polls).
  const own = h('div', { class: 'route' });
  fill(view, own);
  const ctx = { view: own, signal: current.abort.signal, me, can: (capability) => me.capabilities.includes(capability) };
  const match = routes.map(([re, render]) => [re.exec(hash), render]).find(([m]) => m);
  fill(own, h('p', { class: 'muted' }, 'Loading…'));
  try {
    if (match) await match[1](match[0], ctx);
    else location.hash = '#/missions';
  } catch (err) {
    if (ctx.signal.aborted) return;
    if (err instanceof ApiError && err.status === 401) return signOut();
    fill(own, errorBox(err));
  }
}

function signIn(problem) {
  showChrome(false);
  const input = h('input', { id: 'api-key', type: 'password', autocomplete: 'off', required: true, 'aria-describedby': 'key-help' });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Sign in'),
    h('label', { for: 'api-key' }, 'API key'),
    input,
    h('p', { id: 'key-help', class: 'muted' }, 'The key is kept in this tab only (session storage) and sent to this server’s API.'),
    problem ? errorBox(problem) : null,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      me = await api('/me', { key: input.value.trim() });
      session.set(input.value.trim());
      start();
    } catch (err) {
      signIn(err instanceof ApiError && err.status === 401 ? new Error('That key is unknown or revoked.') : err);
    }
  });
  fill(view, form);
  input.focus();
}

function showChrome(on) {
  document.getElementById('nav').hidden = !on;
  document.getElementById('who').hidden = !on;
  if (on) {
    document.getElementById('who-name').textContent = `${me.userId} · ${me.tenantId}`;
  }
}

function signOut() {
  session.clear();
  me = undefined;
  current.abort.abort();
  signIn();
}

function start() {
  showChrome(true);
  if (!location.hash || location.hash === '#/') location.hash = '#/missions';
  else void route();
}

document.getElementById('sign-out').addEventListener('click', signOut);
window.addEventListener('hashchange', () => void route());

if (session.key) {
  api('/me')
    .then((found) => {
      me = found;
      start();
    })
    .catch(() => signOut());
} else signIn();
