// Defect (lifecycle, as for Anthropic; the call is not run): a function_call output item that never gets
// response.output_item.done (connection cut) leaves tool-input-start/-delta without
// tool-input-end, tool-call or tool-error; finishReason 'other' (ai 6); nothing executed.
// Cassettes: openai-responses/{stream_cut_mid_call, stream_cut_after_arguments}.
import { createOpenAI } from '@ai-sdk/openai';
import { recordedFetch, replay, sse, types, verdict } from './_replay.mjs';

const item = { type: 'function_call', id: 'fc_1', call_id: 'call_R1', name: 'write_file', arguments: '', status: 'in_progress' };
const body = sse([
  { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', created_at: 1, model: 'm', status: 'in_progress', output: [] } },
  { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item },
  { type: 'response.function_call_arguments.delta', sequence_number: 2, item_id: 'fc_1', output_index: 0, delta: '{"path": "a.py", "content": "x = 1"}' },
]);
const runs = [];
const { parts } = await replay(createOpenAI({ fetch: recordedFetch(body), apiKey: 'test' }).responses('m'),
  { write_file: async () => (runs.push(1), 'ok') });
const t = types(parts);
console.log('parts:', t.join(','), 'finish:', parts.find(p => p.type === 'finish')?.finishReason, 'executed:', runs.length);
verdict(t.includes('tool-input-start') && !t.includes('tool-input-end') && !t.includes('tool-call') && !t.includes('tool-error') && runs.length === 0,
  'an unfinished Responses function_call is dropped without tool-input-end/tool-call/tool-error (not executed)');
