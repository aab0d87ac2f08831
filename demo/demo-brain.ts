import type { RecordedRequest, Step } from '../fake-model/fake-model-server.ts';

/**
 * The scripted model behind the demo when no MODEL_API_KEY is set: first turn calls both weather tools in
 * parallel, second turn answers from their results. It speaks the real provider protocol over HTTP.
 */
export function demoBrain(req: RecordedRequest): Step {
  const place = /Objective:.*?\bin ([A-Z][\w -]+?)(?:[.,!?]|$)/m.exec(req.lastUserText)?.[1] ?? 'Lisbon';
  if (req.allToolResults.length === 0 && req.toolNames.includes('weather__get_forecast')) {
    return {
      delayMs: 800,
      reply: {
        text: `Checking the forecast and alerts for ${place}.`,
        toolUses: [
          { name: 'weather__get_forecast', input: { place } },
          { name: 'weather__get_alerts', input: { region: place } },
        ],
      },
    };
  }
  const results = req.allToolResults.map((r) => r.content).join(' | ');
  return { delayMs: 800, reply: { text: `Weather brief (from the tools): ${results}` } };
}
