// Defect (lifecycle; the call is not run): an Anthropic tool_use
// block that never gets content_block_stop (in-band error, cut connection, and our max_tokens
// cassette) leaves tool-input-start + deltas with no tool-input-end, no tool-call and no
// tool-error: the call is not run, but it is not reported either (the openai chat provider
// reports the same situation as an invalid tool-call plus a tool-error part).
// Cassettes: anthropic/{error_event_mid_call, stream_cut_mid_call, stream_cut_after_arguments, truncated_max_tokens}.
import { createAnthropic } from '@ai-sdk/anthropic';
import { anthropicSse, recordedFetch, replay, types, verdict } from './_replay.mjs';

const head = [
  { type: 'message_start', message: { id: 'msg', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: {} } },
  { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"path": "a.py", "content": "x' } },
];
const cases = {
  'in-band error': anthropicSse([...head, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]),
  'connection cut': anthropicSse(head),
  'max_tokens without content_block_stop': anthropicSse([...head,
    { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 9 } },
    { type: 'message_stop' }]),
};
let allDangling = true;
for (const [label, body] of Object.entries(cases)) {
  const runs = [];
  const { parts } = await replay(createAnthropic({ fetch: recordedFetch(body), apiKey: 'test' })('m'),
    { write_file: async () => (runs.push(1), 'ok') });
  const t = types(parts);
  const finish = parts.find(p => p.type === 'finish');
  const dangling = t.includes('tool-input-start') && !t.includes('tool-input-end') && !t.includes('tool-call') && !t.includes('tool-error');
  allDangling &&= dangling && runs.length === 0;
  console.log(`${label}: executed=${runs.length} finish=${finish?.finishReason} parts=${t.filter(x => x.startsWith('tool') || x === 'error').join(',')}`);
}
verdict(allDangling, 'an unclosed tool_use block is silently dropped: tool-input-start without tool-input-end/tool-call/tool-error (not executed)');
