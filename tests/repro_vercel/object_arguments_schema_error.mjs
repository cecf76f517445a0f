// Legitimate (an unsupported dialect, fail-safe and surfaced): `function.arguments` sent as a JSON object instead of a string
// (Ollama-style servers) fails the chunk schema of both @ai-sdk/openai and
// @ai-sdk/openai-compatible: an `error` part per chunk, no call, nothing executed.
// Cassette: openai-compatible/dialect_object_arguments.
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { chunk, recordedFetch, replay, sse, verdict } from './_replay.mjs';


const body = sse([chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] }),
  chunk({}, 'tool_calls'), 'data: [DONE]']);
const seen = {};
for (const [label, model] of [
  ['@ai-sdk/openai', createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).chat('m')],
  ['@ai-sdk/openai-compatible', createOpenAICompatible({ name: 'c', baseURL: 'https://x.invalid/v1', fetch: recordedFetch(body) }).chatModel('m')],
]) {
  const { parts } = await replay(model, { get_weather: null });
  seen[label] = { calls: parts.filter(p => p.type === 'tool-call').length, errors: parts.filter(p => p.type === 'error').map(p => p.error.name) };
}
console.log(seen);
verdict(Object.values(seen).every(s => s.calls === 0 && s.errors.length === 1), 'object-valued arguments are a schema error (reported), the call is dropped');
