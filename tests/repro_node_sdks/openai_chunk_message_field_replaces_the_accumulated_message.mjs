#!/usr/bin/env node
// openai (npm) 7.59.0, ChatCompletionStream: a chunk choice that carries a `message` object beside
// its `delta` (Writer's api.writer.com does: every choice has index, finish_reason, message, delta,
// logprobs) has that `message` copied over the accumulated choice's message (accumulateChatCompletion
// copies every unknown choice field with `assignOwnProperties(choice, other)`), so the calls and
// text gathered so far are thrown away; at the finish chunk the helper throws
// `Error: no tool call snapshot` on a stream that ended normally, and neither call can run.
// The suite's recording: cassettes/openai-compatible/dialect_message_and_delta.yaml.
//
// Offline: the body is served through the client's `fetch` option. Exit 1 while the defect is
// present, 0 once the helper returns both calls and the text.
import OpenAI from 'openai';

const choice = (delta, message, finish = null) => ({
  id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm',
  choices: [{ index: 0, delta, message, logprobs: null, finish_reason: finish }],
});
const call = (index, id, name, args) => ({ index, id, type: 'function', function: { name, arguments: args } });
const chunks = [
  choice({ role: 'assistant', content: 'Checking both.' }, { role: 'assistant', content: 'Checking both.' }),
  choice({ tool_calls: [call(0, 'call_a', 'get_weather', '{"city": "Paris"}')] }, { tool_calls: [call(0, 'call_a', 'get_weather', '{"city": "Paris"}')] }),
  choice({ tool_calls: [call(1, 'call_b', 'get_time', '{"tz": "Europe/Oslo"}')] }, { tool_calls: [call(1, 'call_b', 'get_time', '{"tz": "Europe/Oslo"}')] }),
  choice({}, {}, 'tool_calls'),
];
const body = chunks.map(chunk => `data: ${JSON.stringify(chunk)}\n\n`).join('') + 'data: [DONE]\n\n';

const client = new OpenAI({
  apiKey: 'offline', baseURL: 'https://offline.invalid/v1', maxRetries: 0,
  fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
});

let outcome;
try {
  const completion = await client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).finalChatCompletion();
  const message = completion.choices[0].message;
  outcome = { text: message.content, calls: (message.tool_calls ?? []).map(c => [c.id, c.function.name, c.function.arguments]) };
} catch (error) {
  outcome = { raised: `${error.name}: ${error.message}` };
}
console.log('the stream says: text "Checking both.", get_weather call_a {"city": "Paris"}, get_time call_b {"tz": "Europe/Oslo"}, finish_reason tool_calls');
console.log('the SDK returned:', JSON.stringify(outcome));
const expected = JSON.stringify({ text: 'Checking both.', calls: [['call_a', 'get_weather', '{"city": "Paris"}'], ['call_b', 'get_time', '{"tz": "Europe/Oslo"}']] });
if (JSON.stringify(outcome) === expected) {
  console.log('FIXED: both calls and the text survive the chunk-level `message` field');
} else {
  console.log('SHOWN: the chunk choice\'s `message` field replaced the accumulated message (calls and text lost; the stream raises)');
  process.exitCode = 1;
}
