// Defect: Gemini re-sends a complete functionCall with the same id in a later chunk (taxonomy
// B08). @ai-sdk/google emits two tool-call parts with the same toolCallId and streamText executes
// the tool twice. Cassette: gemini/restated_call_same_id.
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { recordedFetch, replay, sse, verdict } from './_replay.mjs';

const call = { name: 'get_weather', args: { city: 'Paris' }, id: 'g8c1su3s' };
const body = sse([
  { candidates: [{ content: { role: 'model', parts: [{ functionCall: call, thoughtSignature: 'c2ln' }] }, index: 0 }] },
  { candidates: [{ content: { role: 'model', parts: [{ functionCall: call }] }, index: 0 }] },
  { candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, index: 0, finishReason: 'STOP' }] },
]);

const runs = [];
const model = createGoogleGenerativeAI({ fetch: recordedFetch(body), apiKey: 'test' })('gemini-test');
const { parts } = await replay(model, { get_weather: async (input, { toolCallId }) => (runs.push(toolCallId), 'ok') });
const toolCalls = parts.filter(p => p.type === 'tool-call').map(p => p.toolCallId);
console.log('tool-call parts:', toolCalls, 'executions:', runs);
verdict(toolCalls.length === 2 && runs.length === 2 && runs[0] === runs[1],
  'one provider call (id g8c1su3s) restated in a later chunk is executed twice');
