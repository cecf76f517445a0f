// Chat Completions dialect where every parallel call arrives on index 0, each with its own id
// (vLLM/Mistral-style servers; cassette openai-compatible/dialect_index_always_zero).
// In ai 6 / @ai-sdk/provider-utils 4.x, StreamingToolCallTracker sees two calls on index 0; the
// continuation deltas of the second call (index 0, no id, no name) match both and are dropped as
// "ambiguous", so the second call finishes with '' and streamText EXECUTES it with {}: silent
// loss of its arguments (taxonomy D03/F06: never run a call with arguments it did not get).
// Both @ai-sdk/openai and @ai-sdk/openai-compatible use the tracker.
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { chunk, recordedFetch, replay, sse, verdict } from './_replay.mjs';

const call = (extra, args) => chunk({ tool_calls: [{ index: 0, ...extra, function: { ...(extra.name ? { name: extra.name } : {}), arguments: args } }] });
const body = sse([
  call({ id: 'call_A', type: 'function', name: 'get_weather' }, ''), call({}, '{"city": "Paris"}'),
  call({ id: 'call_B', type: 'function', name: 'get_time' }, ''), call({}, '{"tz": '), call({}, '"Europe/Oslo"}'),
  chunk({}, 'tool_calls'), 'data: [DONE]']);

const runs = {};
for (const [label, model] of [
  ['@ai-sdk/openai', createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).chat('m')],
  ['@ai-sdk/openai-compatible', createOpenAICompatible({ name: 'c', baseURL: 'https://x.invalid/v1', fetch: recordedFetch(body) }).chatModel('m')],
]) {
  runs[label] = [];
  const record = name => async input => (runs[label].push([name, JSON.stringify(input)]), 'ok');
  await replay(model, { get_weather: record('get_weather'), get_time: record('get_time') });
}
console.log('executed:', runs);
verdict(Object.values(runs).every(r => r.some(([name, input]) => name === 'get_time' && input === '{}')),
  'the second call on index 0 loses its arguments and is executed with {} (the wire sent {"tz": "Europe/Oslo"})');
