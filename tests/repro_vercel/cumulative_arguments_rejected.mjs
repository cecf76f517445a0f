// Legitimate alternative (fail-safe; the cassette is skipped by name: it needs a converter option): servers that send cumulative argument snapshots instead
// of deltas. The AI SDK concatenates them (the documented wire format), the result does not parse,
// the call comes out as an invalid tool-call + tool-error and is not executed. Our expectation
// assumes a converter configured for the dialect (converter_options.cumulative_arguments).
// Cassette: openai-compatible/dialect_cumulative_arguments.
import { createOpenAI } from '@ai-sdk/openai';
import { chunk, recordedFetch, replay, sse, verdict } from './_replay.mjs';


const tc = (args, extra = {}) => chunk({ tool_calls: [{ index: 0, ...extra, function: { ...(extra.id ? { name: 'get_weather' } : {}), arguments: args } }] });
const body = sse([tc('{"city": ', { id: 'call_1', type: 'function' }), tc('{"city": "Paris"}'), chunk({}, 'tool_calls'), 'data: [DONE]']);
const runs = [];
const { parts } = await replay(createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).chat('m'),
  { get_weather: async () => (runs.push(1), 'ok') });
const call = parts.find(p => p.type === 'tool-call');
console.log('tool-call invalid:', call?.invalid, 'input:', JSON.stringify(call?.input), 'tool-error:', parts.some(p => p.type === 'tool-error'), 'executed:', runs.length);
verdict(call?.invalid === true && runs.length === 0, 'cumulative snapshots are concatenated: invalid call, reported, not executed');
