// Our convention, not an AI SDK defect: `reasoning_content` is a DeepSeek/vLLM extension, not
// part of OpenAI's Chat Completions wire. @ai-sdk/openai ignores it; @ai-sdk/openai-compatible
// (the provider for such servers) reads it. Cassettes: openai-chat/reasoning_then_call,
// openai-compatible/deepseek_reasoning_content (through @ai-sdk/openai).
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { chunk, recordedFetch, replay, sse, verdict } from './_replay.mjs';


const body = sse([chunk({ role: 'assistant', reasoning_content: 'The user wants ' }), chunk({ reasoning_content: 'the weather.' }),
  chunk({ content: 'Hi' }), chunk({}, 'stop'), 'data: [DONE]']);
const reasoning = {};
for (const [label, model] of [
  ['@ai-sdk/openai', createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).chat('m')],
  ['@ai-sdk/openai-compatible', createOpenAICompatible({ name: 'c', baseURL: 'https://x.invalid/v1', fetch: recordedFetch(body) }).chatModel('m')],
]) {
  const { parts } = await replay(model, {});
  reasoning[label] = parts.filter(p => p.type === 'reasoning-delta').map(p => p.text).join('');
}
console.log(reasoning);
verdict(reasoning['@ai-sdk/openai'] === '' && reasoning['@ai-sdk/openai-compatible'] === 'The user wants the weather.',
  '@ai-sdk/openai drops reasoning_content (by design), @ai-sdk/openai-compatible keeps it');
