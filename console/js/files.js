// A mission's files: the list result.files names, each downloaded with the signed-in key (a plain link carries none).
import { session } from './api.js';
import { h } from './dom.js';

/** The Files card of a mission's outcome, or null when it returned none. */
export function filesCard(files) {
  if (!files?.length) return null;
  return h(
    'div',
    { class: 'card' },
    h('h2', {}, 'Files'),
    h(
      'ul',
      { 'aria-label': 'Files' },
      files.map((f) =>
        h('li', {}, h('button', { type: 'button', onclick: () => download(f) }, f.name), ` ${f.mediaType} · ${formatBytes(f.size)}`),
      ),
    ),
  );
}

// Saved through a blob URL: the API answers an attachment, and the page never renders the bytes itself.
async function download(file) {
  const res = await fetch(file.url, { headers: { authorization: `Bearer ${session.key}` } });
  if (!res.ok) return;
  const url = URL.createObjectURL(await res.blob());
  const a = h('a', { href: url, download: file.name.split('/').at(-1) });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const formatBytes = (n) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);
