import { decode } from '@toon-format/toon';
import type { RecordedRequest, Step } from '../fake-model/fake-model-server.ts';

const FORECAST = 'weather__get_forecast';
const ALERTS = 'weather__get_alerts';

/**
 * The scripted model behind the demo when no MODEL_API_KEY is set; it speaks the real provider protocol over HTTP.
 * Turn 1: finds the place in the objective and calls the weather tools the ask needs (both for a brief, one when
 * only the forecast or only alerts are asked for), in parallel. Turn 2: writes the brief from their results.
 */
export function demoBrain(req: RecordedRequest): Step {
  if (req.allToolResults.length > 0) return { delayMs: 800, reply: { text: briefFrom(req.allToolResults.map((r) => r.content)) } };
  const objective = /Objective:\s*(.*)/.exec(req.lastUserText)?.[1] ?? req.lastUserText;
  const place = placeOf(objective);
  if (!place) return { delayMs: 400, reply: { text: 'Which place should I brief you on? Name it, as in "the weather in Lisbon".' } };
  const asksAlerts = /\b(alerts?|warnings?|storms?)\b/i.test(objective);
  const asksForecast = /\b(forecast|rain|temperatures?|sunny|cold|warm)\b/i.test(objective);
  const tools = [
    ...(asksForecast || !asksAlerts ? [{ name: FORECAST, input: { place } }] : []),
    ...(asksAlerts || !asksForecast ? [{ name: ALERTS, input: { region: place } }] : []),
  ].filter((t) => req.toolNames.includes(t.name));
  if (tools.length === 0) return { delayMs: 400, reply: { text: `I have no weather tools to check ${place} with.` } };
  return {
    delayMs: 800,
    reply: { text: `Checking ${tools.length === 2 ? 'the forecast and alerts' : 'the weather'} for ${place}.`, toolUses: tools },
  };
}

// Words that start a sentence or name a time, never a place.
const NOT_PLACES = new Set(
  'I Im What Whats Will Is Are Brief Tell Give Show Check Weather Forecast Alerts Tomorrow Today Tonight Please Me My The A An Can Could Should Do Does Any Hi Hello Flying Going Heading Next This Monday Tuesday Wednesday Thursday Friday Saturday Sunday'.split(
    ' ',
  ),
);
const CAPITALISED = String.raw`[A-Z][\p{L}'-]+(?:\s+(?:(?:de|da|do|del|la|le|of|upon|am)\s+)?[A-Z][\p{L}'-]+)*`;
const titleCase = (s: string) => s.replace(/\b\p{L}/gu, (c) => c.toUpperCase());

/**
 * The place in an ask, the way people write it: "weather in Lisbon", "flying to New York tomorrow", "Porto
 * forecast", "Rio de Janeiro this weekend?", "trip to lisbon"; undefined when none is named.
 */
export function placeOf(text: string): string | undefined {
  const keep = (p: string | undefined) => {
    // "Tomorrow Berlin", "New York Monday", "Edinburgh's": drop the words around the place that are not it.
    const words = (p ?? '').replace(/'s$/, '').split(/\s+/);
    const not = (w: string | undefined) => w !== undefined && NOT_PLACES.has(w.replace(/'/g, ''));
    while (not(words[0])) words.shift();
    while (not(words.at(-1))) words.pop();
    return words.join(' ') || undefined;
  };
  const afterPreposition = new RegExp(String.raw`\b(?:in|to|for|at|around|near|visiting|over)\s+(${CAPITALISED})`, 'gu');
  for (const m of text.matchAll(afterPreposition)) if (keep(m[1])) return keep(m[1]);
  const beforeWeather = new RegExp(String.raw`(${CAPITALISED})\s+(?:weather|forecast|alerts?)`, 'u').exec(text)?.[1];
  if (keep(beforeWeather)) return keep(beforeWeather);
  const lower =
    /\b(?:weather|forecast|alerts?|fly(?:ing)?|trip|travel(?:l?ing)?|going|heading|headed)\s+(?:in|to|for)\s+([a-z][\p{L}-]+)/u.exec(
      text,
    )?.[1];
  if (lower && !/^(the|a|an|my|our|tomorrow|today|tonight|next|this)$/.test(lower)) return titleCase(lower);
  for (const m of text.matchAll(new RegExp(CAPITALISED, 'gu'))) if (keep(m[0])) return keep(m[0]);
  return undefined;
}

type Forecast = { place?: string; forecast?: string; highC?: number; lowC?: number };
type Alerts = { region?: string; alerts?: Array<{ level?: string; text?: string }> };

/**
 * At most three lines, as the skill asks: the alert first if there is one, the forecast, one piece of advice. A tool
 * result arrives as compact JSON or as TOON, whichever was shorter, maybe followed by Cadenza's bracketed notes.
 */
export function briefFrom(results: string[]): string {
  const parsed = results.map((r) => {
    const body = r.split('\n\n[')[0]!;
    for (const read of [JSON.parse, decode]) {
      try {
        const value = read(body) as unknown;
        if (typeof value === 'object' && value !== null) return value as Forecast & Alerts;
      } catch {
        // not this form
      }
    }
    return undefined;
  });
  const forecast = parsed.find((p) => p?.forecast !== undefined);
  const alerts = parsed.find((p) => p?.alerts !== undefined);
  const lines: string[] = [];
  for (const a of alerts?.alerts ?? []) lines.push(`${titleCase(a.level ?? 'weather')} alert for ${alerts?.region}: ${a.text}.`);
  if (alerts && !alerts.alerts?.length) lines.push(`No weather alerts for ${alerts.region}.`);
  if (forecast) {
    const range = forecast.lowC !== undefined && forecast.highC !== undefined ? `, ${forecast.lowC} to ${forecast.highC} °C` : '';
    lines.push(`${forecast.place}: ${forecast.forecast}${range}.`);
  }
  const said = lines.join(' ').toLowerCase();
  const advice = [
    /rain|shower/.test(said) && 'take an umbrella',
    /gust|wind/.test(said) && 'expect wind on the coast in the evening',
  ].filter(Boolean);
  if (advice.length) lines.push(`Advice: ${advice.join(', and ')}.`);
  if (lines.length === 0) return `The weather tools gave nothing usable: ${results.join(' | ')}`;
  return lines.slice(0, 3).join('\n');
}
