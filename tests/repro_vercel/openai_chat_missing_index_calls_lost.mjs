// Chat Completions tool deltas without `index` (Mistral, Gemini's OpenAI endpoint; cassette
// openai-compatible/dialect_no_index), two parallel calls, continuations carrying neither id nor index.
// - @ai-sdk/openai: its chunk schema requires `index`: every such chunk becomes an `error` part
//   (AI_TypeValidationError), no call comes out, nothing runs (fail-safe, surfaced);
// - @ai-sdk/openai-compatible (ai 6 / provider-utils 4.x): the continuation of the second call is
//   dropped and the call is EXECUTED with {} (its arguments were '{"tz": "Europe/Oslo"}').
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { chunk, recordedFetch, replay, sse, verdict } from './_replay.mjs';

const body = sse([
  chunk({ tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": ' } }] }),
  chunk({ tool_calls: [{ function: { arguments: '"Paris"}' } }] }),
  chunk({ tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
  chunk({ tool_calls: [{ function: { arguments: '{"tz": "Europe/Oslo"}' } }] }),
  chunk({}, 'tool_calls'), 'data: [DONE]']);
const seen = {};
for (const [label, model] of [
  ['@ai-sdk/openai', createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).chat('m')],
  ['@ai-sdk/openai-compatible', createOpenAICompatible({ name: 'c', baseURL: 'https://x.invalid/v1', fetch: recordedFetch(body) }).chatModel('m')],
]) {
  const runs = [];
  const record = name => async input => (runs.push(`${name}(${JSON.stringify(input)})`), 'ok');
  const { parts } = await replay(model, { get_weather: record('get_weather'), get_time: record('get_time') });
  seen[label] = { errors: parts.filter(p => p.type === 'error').length, executed: runs };
}
console.log(seen);
verdict(seen['@ai-sdk/openai'].executed.length === 0 && seen['@ai-sdk/openai'].errors > 0
  && seen['@ai-sdk/openai-compatible'].executed.includes('get_time({})'),
  '@ai-sdk/openai rejects index-less deltas (errors, nothing runs); @ai-sdk/openai-compatible runs the second call with {}');
