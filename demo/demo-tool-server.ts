import { createServer, type Server } from 'node:http';

/** The demo's weather tools, served locally over HTTP as any app's tools would be (slow enough to watch). */
export async function startDemoToolServer(opts: { delayMs?: number } = {}): Promise<{ url: string; close(): Promise<void> }> {
  const delayMs = opts.delayMs ?? 1_500;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const input = JSON.parse(raw || '{}') as { place?: string; region?: string };
      const body =
        req.url === '/weather/forecast'
          ? {
              place: input.place,
              forecast: 'light rain until noon, then sunny spells',
              highC: 14,
              lowC: 6,
              canvas: temperatureChart(input.place),
            }
          : { region: input.region, alerts: [{ level: 'yellow', text: 'strong gusts along the coast in the evening' }] };
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)), delayMs);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/weather`,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

/** One small Vega-Lite chart of the day's temperatures: the demo's canvas (`result.canvasSpecIds`). */
function temperatureChart(place: string | undefined) {
  const hours = [6, 9, 12, 15, 18, 21];
  const temps = [6, 8, 11, 14, 12, 9];
  return {
    type: 'vega-lite',
    title: `Temperature in ${place ?? 'the destination'} today`,
    spec: {
      mark: { type: 'line', point: true },
      data: { values: hours.map((hour, i) => ({ hour, tempC: temps[i] })) },
      encoding: { x: { field: 'hour', type: 'quantitative' }, y: { field: 'tempC', type: 'quantitative', title: '°C' } },
    },
  };
}
