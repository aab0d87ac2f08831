// Small DOM helpers: elements are built with text nodes, never from HTML strings; the one exception is markdown,
// which goes through DOMPurify first (and the page's CSP refuses inline script besides).
import { marked } from '/vendor/marked.js';
import DOMPurify from '/vendor/purify.js';

/** `h('button', {type: 'button', onclick}, 'Stop')`: attributes starting with `on` become listeners. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Markdown rendered as inert HTML: no script, no event handlers, no forms, no frames, no styles. */
export function markdown(text) {
  const html = marked.parse(String(text ?? ''), { async: false });
  const clean = DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    FORBID_ATTR: ['style'],
  });
  const div = h('div', { class: 'rendered' });
  div.innerHTML = clean;
  for (const a of div.querySelectorAll('a[href]')) {
    a.setAttribute('rel', 'noopener noreferrer');
    a.setAttribute('target', '_blank');
  }
  return div;
}

export const pill = (status) => h('span', { class: 'pill', dataset: { status } }, status.replaceAll('_', ' '));

export function announce(text) {
  const el = document.getElementById('announce');
  el.textContent = '';
  setTimeout(() => (el.textContent = text), 50);
}

export function formatMs(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export const formatTime = (iso) => (iso ? new Date(iso).toLocaleString() : '');

/** An error shown where it happened: the API's message, and each field it names. */
export function errorBox(err) {
  const fields = err?.details?.fields ?? [];
  return h(
    'div',
    { class: 'error-text', role: 'alert' },
    h('p', {}, err?.message ?? String(err)),
    fields.length
      ? h(
          'ul',
          { class: 'field-errors' },
          fields.map((f) => h('li', {}, h('strong', {}, f.field), ': ', f.message)),
        )
      : null,
  );
}
