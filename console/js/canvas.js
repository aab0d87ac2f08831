// Canvases a tool result carried: a Vega-Lite chart drawn with Vega (loaded on first use), a table, or markdown.
import { api } from './api.js';
import { errorBox, h, markdown } from './dom.js';

let vega;
/**
 * Vega, Vega-Lite and vega-embed (UMD builds that set globals, loaded in order the first time a chart is drawn), then
 * Vega's expression interpreter, so that a chart draws under a CSP without `unsafe-eval`.
 */
function loadVega() {
  vega ??= ['/vendor/vega.js', '/vendor/vega-lite.js', '/vendor/vega-embed.js'].reduce(
    (ready, src) =>
      ready.then(
        () =>
          new Promise((ok, fail) => {
            const script = h('script', { src });
            script.addEventListener('load', ok);
            script.addEventListener('error', () => fail(new Error(`could not load ${src}`)));
            document.head.append(script);
          }),
      ),
    Promise.resolve(),
  );
  return vega.then(async () => {
    const { expressionInterpreter } = await import('/vendor/vega-interpreter.js');
    return (target, spec) => window.vegaEmbed(target, spec, { actions: false, renderer: 'svg', ast: true, expr: expressionInterpreter });
  });
}

/** One stored canvas, drawn. A chart that fails to draw shows why, and the rest of the page goes on. */
export async function canvasView(canvasId) {
  const canvas = await api(`/canvases/${canvasId}`);
  const figure = h('figure', { class: 'canvas', dataset: { canvasId, type: canvas.type } }, h('figcaption', {}, canvas.title));
  try {
    if (canvas.type === 'vega-lite') {
      const target = h('div', { 'aria-label': `Chart: ${canvas.title}`, role: 'img' });
      figure.append(target);
      const embed = await loadVega();
      await embed(target, canvas.spec);
    } else if (canvas.type === 'table') {
      const { columns = [], rows = [] } = canvas.spec;
      figure.append(
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              columns.map((c) => h('th', {}, String(c))),
            ),
          ),
          h(
            'tbody',
            {},
            rows.map((r) =>
              h(
                'tr',
                {},
                (Array.isArray(r) ? r : columns.map((c) => r[c])).map((v) => h('td', {}, v ?? '')),
              ),
            ),
          ),
        ),
      );
    } else {
      figure.append(markdown(canvas.spec));
    }
  } catch (err) {
    figure.append(errorBox(err));
  }
  return figure;
}
