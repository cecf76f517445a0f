// UI surface (streamText itself is safe): a Chat Completions stream cut after a call's arguments
// parse, before finish_reason (cassette openai-chat/stream_cut_after_arguments; gemini likewise).
// streamText does not execute the call (the step finished with 'other', not 'stop'/'tool-calls'),
// but the tool-call part is a valid call (invalid: false) and the UI message stream sends
// `tool-input-available` for it, which is where useChat's onToolCall runs client-side tools
// (ai/src/ui/process-ui-message-stream.ts, case 'tool-input-available'): an interrupted turn's
// call reaches client tools (taxonomy F07/F08).
import { createOpenAI } from '@ai-sdk/openai';
import { chunk, recordedFetch, replay, sse, verdict } from './_replay.mjs';

const body = sse([chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '{"path": "a.py", ' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"content": "x = 1"}' } }] })]); // cut: no finish_reason, no [DONE]
const runs = [];
const { parts } = await replay(createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).chat('m'), { write_file: async () => (runs.push(1), 'ok') });
const call = parts.find(p => p.type === 'tool-call');
const finish = parts.find(p => p.type === 'finish');

const { result } = await replay(createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).chat('m'), { write_file: null });
const ui = [];
for await (const c of result.toUIMessageStream()) ui.push(c.type === 'finish' ? `finish(${c.finishReason ?? ''})` : c.type);
console.log('streamText executed:', runs.length, 'finish:', finish?.finishReason, 'tool-call invalid:', call?.invalid ?? false);
console.log('UI stream:', ui.filter(t => !t.startsWith('tool-input-delta')).join(' '));
verdict(runs.length === 0 && call !== undefined && !call.invalid && finish?.finishReason === 'other' && ui.includes('tool-input-available'),
  "an interrupted turn's call is delivered to the UI as a valid call (tool-input-available) although streamText would not run it");
