// Skills: the list, import (a SKILL.md or a zip), and one skill: rendered body, versions, review (with its evals), export, edit.
import { api } from './api.js';
import { announce, errorBox, fill, formatTime, h, markdown, pill } from './dom.js';
import { evalsCard } from './evals.js';

export async function skillsView(ctx) {
  const { view } = ctx;
  const { items } = await api('/skills');
  fill(
    view,
    h('h1', {}, 'Skills'),
    ctx.can('skill.write') ? importForm() : null,
    h(
      'table',
      { 'aria-label': 'Skills' },
      h(
        'thead',
        {},
        h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Status'), h('th', {}, 'Version'), h('th', { class: 'hide-narrow' }, 'Source')),
      ),
      h(
        'tbody',
        {},
        items.length === 0 ? h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No skills yet.')) : null,
        items.map((s) =>
          h(
            'tr',
            {},
            h('td', {}, h('a', { href: `#/skills/${s.id}` }, s.name), h('div', { class: 'muted' }, s.description)),
            h('td', {}, pill(s.status)),
            h('td', {}, s.version ? `v${s.version}` : '—'),
            h('td', { class: 'hide-narrow' }, s.source),
          ),
        ),
      ),
    ),
  );
}

function importForm() {
  const file = h('input', { id: 'import-file', type: 'file', accept: '.md,.zip,text/markdown,application/zip', required: true });
  const problems = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'import-title' },
    h('h2', { id: 'import-title' }, 'Import a skill'),
    h('p', { class: 'muted' }, 'A SKILL.md or a zip of the skill folder. Imports are quarantined until a reviewer activates them.'),
    h('label', { for: 'import-file' }, 'SKILL.md or zip'),
    file,
    problems,
    h('p', {}, h('button', { type: 'submit' }, 'Import')),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    try {
      const zip = chosen.name.toLowerCase().endsWith('.zip');
      const stored = zip
        ? await api('/skills/import/zip', { method: 'POST', body: await chosen.arrayBuffer(), type: 'application/zip' })
        : await api('/skills/import', { method: 'POST', body: await chosen.text(), type: 'text/markdown' });
      location.hash = `#/skills/${stored.id}`;
    } catch (err) {
      fill(problems, errorBox(err));
    }
  });
  return form;
}

export async function skillView(ctx, id, version) {
  const { view } = ctx;
  const query = version ? `?version=${version}` : '';
  const skill = await api(`/skills/${id}${query}`);
  const problems = h('div');
  const review = [];
  // A draft version (a new version awaiting review) is activated as a whole skill's status is.
  if (ctx.can('skill.review') && (skill.status !== 'active' || skill.draftVersion))
    review.push(statusButton('activate', skill.draftVersion ? `Activate v${skill.draftVersion}` : 'Activate'));
  if (ctx.can('skill.review') && skill.status === 'active') review.push(statusButton('deactivate', 'Deactivate'));

  function statusButton(action, label) {
    const b = h('button', { type: 'button', id: `skill-${action}` }, label);
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await api(`/skills/${id}/${action}`, { method: 'POST' });
        announce(`Skill ${action}d`);
        await skillView(ctx, id);
      } catch (err) {
        b.disabled = false;
        fill(problems, errorBox(err));
      }
    });
    return b;
  }

  const exportButton = h('button', { type: 'button', class: 'quiet' }, 'Export SKILL.md');
  exportButton.addEventListener('click', async () => {
    const text = await api(`/skills/${id}/export${query}`);
    const url = URL.createObjectURL(new Blob([text], { type: 'text/markdown' }));
    const a = h('a', { href: url, download: `${skill.name}-v${skill.version}.md` });
    document.body.append(a);
    a.click();
    a.remove();
    URL.revokeObjectURL(url);
  });

  fill(
    view,
    h('p', {}, h('a', { href: '#/skills' }, '← Skills')),
    skill.status === 'quarantined' ? quarantineBanner(skill, ctx) : null,
    h(
      'div',
      { class: 'card' },
      h('div', { class: 'row spread' }, h('h1', {}, skill.name), h('div', { class: 'row' }, pill(skill.status), ...review, exportButton)),
      h('p', {}, skill.description),
      h(
        'nav',
        { 'aria-label': 'Versions' },
        h(
          'ul',
          { class: 'versions' },
          skill.versions.map((v) =>
            h(
              'li',
              {},
              h(
                'a',
                {
                  href: `#/skills/${id}`,
                  'aria-current': v === skill.version ? 'true' : 'false',
                  onclick: (e) => {
                    e.preventDefault();
                    void skillView(ctx, id, v);
                  },
                },
                `v${v}${v === skill.activeVersion && skill.status === 'active' ? ' (active)' : ''}`,
              ),
            ),
          ),
        ),
      ),
      skill.warnings?.length
        ? h(
            'ul',
            { class: 'muted' },
            skill.warnings.map((w) => h('li', {}, typeof w === 'string' ? w : (w.message ?? JSON.stringify(w)))),
          )
        : null,
      problems,
    ),
    await evalsCard(ctx, skill),
    h('section', { class: 'card', 'aria-label': 'Rendered SKILL.md' }, markdown(skill.body)),
    ctx.can('skill.write') ? await editForm(ctx, skill, query) : null,
  );
}

function quarantineBanner(skill, ctx) {
  const audit = skill.importAudit ?? {};
  return h(
    'section',
    { class: 'banner', role: 'region', 'aria-label': 'Quarantined' },
    h('strong', {}, 'Quarantined import. '),
    'This skill was imported and cannot run until a reviewer activates it. Read it first.',
    h(
      'dl',
      {},
      Object.entries(audit).map(([k, v]) => [h('dt', {}, k), h('dd', {}, auditValue(k, v))]),
    ),
    ctx.can('skill.review') ? null : h('p', { class: 'muted' }, 'Activating needs a key with the skill.review capability.'),
  );
}

async function editForm(ctx, skill, query) {
  const source = h(
    'textarea',
    { id: 'edit-source', class: 'source', spellcheck: 'false' },
    await api(`/skills/${skill.id}/export${query}`),
  );
  const problems = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'edit-title' },
    h('h2', { id: 'edit-title' }, 'Edit as a new version'),
    h('label', { for: 'edit-source' }, 'SKILL.md'),
    source,
    problems,
    h('p', {}, h('button', { type: 'submit' }, 'Save as new version')),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const saved = await api(`/skills/${skill.id}/versions`, { method: 'POST', body: source.value, type: 'text/markdown' });
      announce(`Saved version ${saved.version}`);
      await skillView(ctx, skill.id, saved.version);
    } catch (err) {
      fill(problems, errorBox(err));
    }
  });
  return form;
}

/** One import-audit value as a person reads it: times local, lists one item a line, nothing as a dash. */
function auditValue(key, value) {
  if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) return '—';
  if (typeof value === 'string') return key.endsWith('At') ? formatTime(value) : value;
  if (Array.isArray(value))
    return h(
      'ul',
      {},
      value.map((v) => h('li', {}, typeof v === 'string' ? v : (v.message ?? JSON.stringify(v)))),
    );
  return JSON.stringify(value);
}
