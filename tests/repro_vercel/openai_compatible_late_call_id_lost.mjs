// Defect (minor): the provider's call id arrives on a later delta (DeepSeek/vLLM dialect).
// StreamingToolCallTracker (@ai-sdk/provider-utils, used by @ai-sdk/openai and
// @ai-sdk/openai-compatible) generates an id at the first delta and never adopts the real one.
// Cassette: openai-compatible/dialect_id_late.
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { recordedFetch, replay, sse, verdict } from './_replay.mjs';

const delta = (toolCall, finish = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm',
  choices: [{ index: 0, delta: toolCall ? { tool_calls: [toolCall] } : {}, finish_reason: finish }] });
const body = sse([
  delta({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '{"city": ' } }),
  delta({ index: 0, id: 'call_dlA1', function: { arguments: '"Paris"}' } }),
  delta(null, 'tool_calls'),
  'data: [DONE]',
]);

const ids = {};
for (const [label, model] of [
  ['@ai-sdk/openai', createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).chat('m')],
  ['@ai-sdk/openai-compatible', createOpenAICompatible({ name: 'c', baseURL: 'https://x.invalid/v1', fetch: recordedFetch(body), apiKey: 'test' }).chatModel('m')],
]) {
  const { parts } = await replay(model, { get_weather: null });
  ids[label] = parts.filter(p => p.type === 'tool-call').map(p => p.toolCallId);
}
console.log('provider sent call_dlA1; tool-call ids:', ids);
verdict(Object.values(ids).every(list => list.length === 1 && list[0] !== 'call_dlA1'),
  "a call id that arrives after the call's first delta is replaced by a generated id");
