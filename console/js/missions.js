// Missions: the caller's list (live status), the start form, and one mission's live timeline from its SSE stream.
import { api, followEvents } from './api.js';
import { announce, errorBox, fill, formatMs, formatTime, h, markdown, pill } from './dom.js';
import { canvasView } from './canvas.js';
import { exchangeRow, messageBox, messageRow } from './session.js';
import { budgetBox } from './budget.js';
import { clientToolForm } from './client-tool.js';
import { filesCard } from './files.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export async function missionsView(ctx) {
  const { view, signal } = ctx;
  const table = h('tbody');
  const list = h(
    'table',
    { 'aria-label': 'Missions' },
    h(
      'thead',
      {},
      h('tr', {}, h('th', {}, 'Status'), h('th', {}, 'Skill'), h('th', {}, 'Objective'), h('th', { class: 'hide-narrow' }, 'Started')),
    ),
    table,
  );
  fill(view, h('h1', {}, 'Missions'), ctx.can('mission.run') ? await startForm() : null, h('h2', {}, 'Your missions'), list);

  async function refresh() {
    const { items } = await api('/missions?limit=50');
    fill(
      table,
      items.length === 0 ? h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No missions yet.')) : null,
      items.map((m) =>
        h(
          'tr',
          { dataset: { missionId: m.id } },
          h('td', {}, pill(m.status)),
          h('td', {}, m.skill?.name ?? ''),
          h('td', { class: 'objective' }, h('a', { href: `#/missions/${m.id}` }, m.objective)),
          h('td', { class: 'hide-narrow' }, formatTime(m.createdAt)),
        ),
      ),
    );
    return items.some((m) => !TERMINAL.has(m.status));
  }
  // Live status: the list is read again while a mission in it is still going (and the view is open).
  while (!signal.aborted) {
    const live = await refresh();
    await sleep(live ? 2_000 : 10_000, signal);
  }
}

async function startForm() {
  const { items } = await api('/skills?status=active');
  const skill = h(
    'select',
    { id: 'start-skill', required: true },
    items.map((s) => h('option', { value: s.name }, `${s.name} (v${s.version})`)),
    h('option', { value: 'auto' }, 'auto: let discovery pick'),
  );
  const objective = h('textarea', { id: 'start-objective', required: true, maxlength: 20000 });
  const workspace = h('input', { id: 'start-workspace', required: true, value: 'console', maxlength: 128 });
  const session = h('input', { type: 'checkbox', id: 'start-session' });
  const problems = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'start-title' },
    h('h2', { id: 'start-title' }, 'Start a mission'),
    h('label', { for: 'start-skill' }, 'Skill'),
    skill,
    h('label', { for: 'start-objective' }, 'Objective'),
    objective,
    h('label', { for: 'start-workspace' }, 'Workspace'),
    workspace,
    h('p', {}, h('label', { for: 'start-session' }, session, ' Session: keep talking after the answer')),
    problems,
    h('p', {}, h('button', { type: 'submit' }, 'Start mission')),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const mission = await api('/missions', {
        method: 'POST',
        body: {
          skill: skill.value,
          objective: objective.value,
          workspaceCode: workspace.value,
          ...(session.checked ? { session: true } : {}),
        },
      });
      location.hash = `#/missions/${mission.id}`;
    } catch (err) {
      fill(problems, errorBox(err));
    }
  });
  return form;
}

/** One mission: header, live timeline, result. Rebuilt from the stream's start on every visit, so a reload shows each row once. */
export async function missionView(ctx, id) {
  const { view, signal, me } = ctx;
  const mission = await api(`/missions/${id}`);
  const status = h('span', {}, pill(mission.status));
  const connection = h('span', { class: 'muted', 'aria-live': 'polite' });
  const cancel = h('button', { type: 'button', class: 'danger', id: 'cancel-mission' }, 'Cancel mission');
  cancel.hidden = !ctx.can('mission.run') || TERMINAL.has(mission.status);
  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await api(`/missions/${id}/cancel`, { method: 'POST' });
      announce('Cancelling the mission');
    } catch (err) {
      cancel.disabled = false;
      problems.replaceChildren(errorBox(err));
    }
  });
  const ui = me.temporal?.uiUrl;
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'Timeline' });
  const outcome = h('section', { 'aria-label': 'Result' });
  const problems = h('div');
  const talk = messageBox(id, { session: mission.session === true });
  talk.hidden = !ctx.can('mission.run') || TERMINAL.has(mission.status);
  const budget = budgetBox(id);
  let answered = 0; // a session's exchanges answered so far, counted from the stream's idle statuses
  fill(
    view,
    h('p', {}, h('a', { href: '#/missions' }, '← Missions')),
    h(
      'div',
      { class: 'card' },
      h('div', { class: 'row spread' }, h('h1', {}, `Mission · ${mission.skill?.name ?? ''}`), h('div', { class: 'row' }, status, cancel)),
      h('p', {}, mission.objective),
      mission.parentId
        ? h('p', { class: 'muted' }, 'Sub-mission of ', h('a', { href: `#/missions/${mission.parentId}` }, mission.parentId))
        : null,
      h(
        'p',
        { class: 'muted row' },
        `Started ${formatTime(mission.createdAt)}`,
        ui
          ? h(
              'a',
              { href: `${ui}/namespaces/${me.temporal.namespace}/workflows/mission-${id}`, target: '_blank', rel: 'noopener' },
              'Run in the Temporal Web UI',
            )
          : null,
        connection,
      ),
      problems,
    ),
    h('h2', {}, 'Timeline'),
    timeline,
    budget,
    talk,
    outcome,
  );

  const tools = new Map(); // toolUseId → its row (the latest call of that id: some servers reuse ids across turns)
  let streamed; // the current turn's streamed text, while the model writes it
  const ticker = setInterval(() => {
    for (const t of tools.values()) if (t.running || t.awaiting) t.duration.textContent = formatMs(Date.now() - t.startedAt);
  }, 250);
  signal.addEventListener('abort', () => clearInterval(ticker));

  const onEvent = (type, e) => {
    switch (type) {
      case 'status':
        status.replaceChildren(pill(e.status));
        if (e.resumed) timeline.append(h('li', {}, `Retry of ${e.resumed.retryOf}, resumed at turn ${e.resumed.turn}`));
        if (e.status === 'idle') timeline.append(exchangeRow(id, ++answered));
        budget.hidden = e.status !== 'paused' || !ctx.can('mission.run');
        if (TERMINAL.has(e.status)) {
          cancel.hidden = true;
          talk.hidden = true;
          for (const t of tools.values()) if (t.running || t.awaiting) stopRow(t);
          void showOutcome();
        }
        break;
      case 'turn':
        timeline.append(h('li', { class: 'turn', dataset: { seq: e.seq } }, `Turn ${e.turn}`));
        streamed = undefined;
        break;
      case 'approval_requested':
        addTool(e, 'awaiting_approval');
        break;
      case 'approval_decided':
        decided(e);
        break;
      case 'tool_start':
        addTool(e);
        break;
      case 'client_tool_call':
        waitForResult(e);
        break;
      case 'embed':
        embedChanged(e);
        break;
      case 'tool_end':
        endTool(e);
        break;
      case 'text_delta':
        if (!streamed) {
          streamed = h('p', { class: 'streamed', 'aria-label': 'Model is writing' });
          timeline.append(h('li', {}, streamed));
        }
        streamed.textContent += e.text;
        break;
      case 'reset':
        if (streamed) streamed.textContent = '';
        break;
      case 'message':
        timeline.append(messageRow(e));
        break;
      case 'budget_reached':
        timeline.append(h('li', { class: 'turn', dataset: { seq: e.seq } }, `Budget reached after turn ${e.turn}: paused`));
        budget.reached(e);
        break;
      case 'context_compacted':
        timeline.append(
          h('li', { class: 'muted', dataset: { seq: e.seq } }, `Context compacted: ${e.messages} earlier messages folded into a summary`),
        );
        break;
      case 'delegate':
        timeline.append(
          h('li', { dataset: { seq: e.seq } }, 'Sub-mission ', h('a', { href: `#/missions/${e.childId}` }, e.skill), ` ${e.status}`),
        );
        break;
      case 'output_rejected':
        timeline.append(
          h(
            'li',
            { class: 'muted', dataset: { seq: e.seq } },
            `Answer misses the output schema${e.retried ? ' (asked again)' : ''}: ${e.errors}`,
          ),
        );
        break;
      case 'model_fallback':
        timeline.append(
          h('li', { class: 'muted', dataset: { seq: e.seq } }, `Model ${e.from} unavailable (${e.reason}): turn ${e.turn} goes to ${e.to}`),
        );
        break;
      case 'provider_wait':
        timeline.append(
          h(
            'li',
            { class: 'muted', dataset: { seq: e.seq } },
            `Turn ${e.turn} waits its turn at ${e.target}'s limits (about ${Math.ceil(e.waitMs / 1000)} s)`,
          ),
        );
        break;
      case 'tool_attempt':
        timeline.append(h('li', { dataset: { seq: e.seq } }, `Script attempt ${e.progress} of ${e.total}: ${e.message}`));
        break;
      case 'error':
        timeline.append(h('li', { class: 'error-text', dataset: { seq: e.seq } }, `Error in ${e.phase}: ${e.message}`));
        break;
    }
  };

  function addTool(e, status = 'running') {
    const known = tools.get(e.toolUseId);
    // An approved call's tool_start follows its approval_requested: the same row goes on running.
    if (known && status === 'running' && known.awaiting) {
      known.awaiting = false;
      known.running = true;
      known.startedAt = Date.parse(e.at);
      known.pill.replaceChildren(pill('running'));
      known.decision?.remove();
      return;
    }
    const stop = h('button', { type: 'button', class: 'small danger', 'aria-label': `Stop ${e.tool}` }, 'Stop');
    const row = {
      running: status === 'running',
      awaiting: status === 'awaiting_approval',
      startedAt: Date.parse(e.at),
      pill: h('span', { class: 'status' }, pill(status)),
      duration: h('span', { class: 'muted' }),
      detail: h('div', { class: 'detail' }),
      embed: h('div', { class: 'detail' }),
      stop,
    };
    stop.hidden = !ctx.can('mission.run');
    stop.addEventListener('click', async () => {
      stop.disabled = true;
      stop.textContent = 'Stopping…';
      try {
        await api(`/missions/${id}/tools/${encodeURIComponent(e.toolUseId)}/cancel`, { method: 'POST' });
      } catch (err) {
        if (err.status !== 409) row.detail.replaceChildren(errorBox(err));
      }
    });
    if (row.awaiting && ctx.can('mission.run')) row.decision = approvalForm(e, row);
    const li = h(
      'li',
      { dataset: { seq: e.seq, toolUseId: e.toolUseId } },
      h('div', { class: 'tool' }, h('span', { class: 'name' }, e.tool), row.pill, row.duration, stop, row.decision, row.detail, row.embed),
    );
    row.li = li;
    tools.set(e.toolUseId, row);
    timeline.append(li);
  }

  /** Approve (optionally with an edited input) or deny a call that waits for a person. */
  function approvalForm(e, row) {
    const input = h(
      'textarea',
      { class: 'source', 'aria-label': `Input of ${e.tool}`, spellcheck: 'false' },
      JSON.stringify(e.input, null, 2),
    );
    input.style.minHeight = '80px';
    const reason = h('input', { 'aria-label': `Reason to deny ${e.tool}`, placeholder: 'Reason (optional)', maxlength: 2000 });
    const approve = h('button', { type: 'button', class: 'small' }, 'Approve');
    const deny = h('button', { type: 'button', class: 'small danger' }, 'Deny');
    const decide = async (path, body) => {
      approve.disabled = deny.disabled = true;
      try {
        await api(`/missions/${id}/tools/${encodeURIComponent(e.toolUseId)}/${path}`, { method: 'POST', body });
      } catch (err) {
        approve.disabled = deny.disabled = false;
        row.detail.replaceChildren(errorBox(err));
      }
    };
    approve.addEventListener('click', () => {
      let edited;
      try {
        edited = JSON.parse(input.value);
      } catch {
        row.detail.replaceChildren(errorBox(new Error('The input is not valid JSON.')));
        return;
      }
      const changed = JSON.stringify(edited) !== JSON.stringify(e.input);
      void decide('approve', changed ? { input: edited } : {});
    });
    deny.addEventListener('click', () => void decide('deny', reason.value.trim() ? { reason: reason.value.trim() } : {}));
    return h(
      'div',
      { class: 'detail', role: 'group', 'aria-label': `Approval of ${e.tool}` },
      h('p', {}, 'Waits for your approval. Input:'),
      input,
      h('div', { class: 'row' }, approve, reason, deny),
    );
  }

  /** A call of a tool the caller runs: its row offers the result form until the call ends (stopRow removes it). */
  function waitForResult(e) {
    const row = tools.get(e.toolUseId);
    if (!row || !row.running || !ctx.can('mission.run')) return;
    row.decision = clientToolForm(id, e, row.detail);
    row.detail.before(row.decision);
    announce(`${e.tool} waits for your result`);
  }

  function decided(e) {
    const row = tools.get(e.toolUseId);
    if (!row) return;
    row.decision?.remove();
    announce(`${e.tool} ${e.decision.replace('_', ' ')}`);
    if (e.decision === 'approved') return; // its tool_start follows
    row.awaiting = false;
    row.pill.replaceChildren(pill(e.decision === 'cancelled' ? 'cancelled' : 'denied'));
    row.stop.remove();
    if (e.reason) row.detail.replaceChildren(h('span', { class: 'muted' }, `Reason: ${e.reason}`));
  }

  /** An embed's status; once finished, its card: previews, follow-ups and canvases (drawn). */
  async function embedChanged(e) {
    const row = tools.get(e.toolUseId);
    if (!row) return;
    row.embed.replaceChildren(h('div', { class: 'embed', dataset: { embedId: e.embedId } }, 'Result ', pill(e.status)));
    if (e.status !== 'finished') return;
    const embed = await api(`/embeds/${e.embedId}`);
    const card = h(
      'div',
      { class: 'embed', dataset: { embedId: e.embedId } },
      'Result ',
      pill(e.status),
      embed.previews.length
        ? h('span', { class: 'muted' }, ` · ${embed.previews.length} preview${embed.previews.length > 1 ? 's' : ''}`)
        : null,
      embed.followUps.length
        ? h(
            'ul',
            { 'aria-label': 'Follow-ups' },
            embed.followUps.map((f) => h('li', {}, f)),
          )
        : null,
      embed.warnings.length
        ? h(
            'ul',
            { class: 'muted' },
            embed.warnings.map((w) => h('li', {}, w)),
          )
        : null,
    );
    row.embed.replaceChildren(card);
    for (const canvasId of embed.canvasSpecIds) card.append(await canvasView(canvasId));
  }

  function endTool(e) {
    const row = tools.get(e.toolUseId);
    if (!row) return;
    stopRow(row, e.status);
    row.duration.textContent = formatMs(e.durationMs);
    if (e.error) row.detail.replaceChildren(h('span', { class: 'error-text' }, e.error));
    announce(`${e.tool} ${e.status}`);
  }

  function stopRow(row, to) {
    row.running = false;
    row.awaiting = false;
    row.decision?.remove();
    row.stop.remove();
    if (to) row.pill.replaceChildren(pill(to));
  }

  async function showOutcome() {
    const done = await api(`/missions/${id}`);
    const m = done.result?.metrics;
    fill(
      outcome,
      done.result
        ? h(
            'div',
            { class: 'card' },
            h('h2', {}, 'Answer'),
            markdown(done.result.text),
            done.result.followUps?.length
              ? h(
                  'div',
                  {},
                  h('h3', {}, 'Suggested next'),
                  h(
                    'ul',
                    { 'aria-label': 'Suggested next' },
                    done.result.followUps.map((f) => h('li', {}, f)),
                  ),
                )
              : null,
            m
              ? h(
                  'div',
                  { class: 'metrics', 'aria-label': 'Metrics' },
                  metric('Turns', m.turns),
                  metric('Tool calls', m.toolCalls),
                  metric('Tokens in / out', `${m.inputTokens} / ${m.outputTokens}`),
                  m.cacheReadTokens ? metric('Read from cache', `${m.cacheReadTokens} of ${m.inputTokens} in`) : null,
                  metric('Cost', `$${m.costUsd.toFixed(4)}`),
                  metric('Elapsed', formatMs(m.elapsedMs)),
                  metric('Stopped by', done.result.stoppedBy),
                )
              : null,
          )
        : null,
      filesCard(done.result?.files),
      done.error ? h('div', { class: 'card error-text', role: 'alert' }, `Failed in ${done.error.phase}: ${done.error.message}`) : null,
      done.children?.length
        ? h(
            'div',
            { class: 'card' },
            h('h2', {}, 'Sub-missions'),
            h(
              'ul',
              { 'aria-label': 'Sub-missions' },
              done.children.map((c) => h('li', {}, h('a', { href: `#/missions/${c.id}` }, c.skill.name), ' ', pill(c.status))),
            ),
          )
        : null,
    );
  }

  await followEvents(id, {
    signal,
    onEvent,
    onState: (state, err) => {
      connection.textContent = { live: '● live', reconnecting: 'reconnecting…', ended: '', error: err?.message ?? '' }[state] ?? '';
    },
  });
}

const metric = (label, value) => h('div', {}, h('span', {}, label), String(value));

function sleep(ms, signal) {
  return new Promise((ok) => {
    const t = setTimeout(ok, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), ok()), { once: true });
  });
}
