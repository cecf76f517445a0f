#!/usr/bin/env node
// openai (npm) 7.59.0, `client.chat.completions.runTools({ stream: true, tools })`: two calls that
// both come on tool-call `index: 0` (Ollama's dialect: get_weather id call_a, then get_time id
// call_b) are accumulated into ONE call (ChatCompletionStream keys its snapshots by index:
// `toolCallSnapshots[index]`): the later id and name replace the earlier ones and the two argument
// texts are concatenated. The runner sees a single get_time call whose arguments are not one JSON
// value, so `parse: JSON.parse` refuses them and neither tool runs.
//
// Not a defect: the matrix lists this input shape outside the SDK's target (outside_target
// "index_always_zero": OpenAI numbers a turn's calls 0, 1, ...). The suite's recording:
// cassettes/openai-compatible/dialect_index_always_zero.yaml.
//
// Run: node openai_calls_on_index_zero_are_merged.mjs. Exit 1 while the behaviour is there, 0 once
// it changed, 2 when it cannot run. Offline: the body is served through the client's `fetch`
// option; the global fetch and sockets throw.
import net from 'node:net';

globalThis.fetch = async input => {
  throw new Error(`network access attempted (global fetch ${String(input?.url ?? input)})`);
};
net.Socket.prototype.connect = function connect() {
  throw new Error('network access attempted (net.Socket#connect)');
};

let OpenAI;
try {
  ({ default: OpenAI } = await import('openai'));
} catch (error) {
  console.error(`cannot run: ${error.message}`);
  process.exit(2);
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const toolDelta = call => chunk({ tool_calls: [{ index: 0, ...call }] });
// Two calls, each opened with its own id and name, both on index 0.
const body =
  chunk({ role: 'assistant', content: '' }) +
  toolDelta({ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }) +
  toolDelta({ function: { arguments: '{"city": ' } }) +
  toolDelta({ function: { arguments: '"Paris"}' } }) +
  toolDelta({ id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }) +
  toolDelta({ function: { arguments: '{"tz": ' } }) +
  toolDelta({ function: { arguments: '"Europe/Oslo"}' } }) +
  chunk({}, 'tool_calls') +
  'data: [DONE]\n\n';
const followUp = chunk({ role: 'assistant', content: 'done' }, 'stop') + 'data: [DONE]\n\n';

let requests = 0;
const client = new OpenAI({
  apiKey: 'offline', baseURL: 'https://offline.invalid/v1', maxRetries: 0,
  fetch: async () => new Response(++requests === 1 ? body : followUp, { headers: { 'content-type': 'text/event-stream' } }),
});

const ran = [];
const tool = name => ({
  type: 'function',
  function: {
    name,
    parameters: { type: 'object' },
    parse: JSON.parse,
    function: args => {
      ran.push([name, args]);
      return `${name} ran`;
    },
  },
});
let raised = null;
const runner = client.chat.completions.runTools({
  model: 'm', messages: [{ role: 'user', content: 'weather and time?' }], stream: true, tools: [tool('get_weather'), tool('get_time')],
});
try {
  await runner.done();
} catch (error) {
  raised = `${error.name}: ${error.message}`;
}
const first = runner.allChatCompletions()[0];
const calls = (first?.choices[0]?.message?.tool_calls ?? []).map(call => [call.id, call.function?.name, call.function?.arguments]);
const toolMessages = runner.messages.filter(message => message.role === 'tool').map(message => [message.tool_call_id, message.content]);

console.log('the stream says: get_weather call_a {"city": "Paris"} and get_time call_b {"tz": "Europe/Oslo"}, both on index 0; finish_reason "tool_calls"');
console.log(`the SDK's message: tool_calls ${JSON.stringify(calls)}`);
console.log(`the runner: tools ran ${JSON.stringify(ran)}; raised ${JSON.stringify(raised)}`);
console.log(`  tool messages sent back to the model: ${JSON.stringify(toolMessages)}`);
console.log(`  requests made: ${requests}`);

// Written by hand from the body: call_b's id and get_time's name replace call_a / get_weather, the
// two argument texts are joined.
const merged = [['call_b', 'get_time', '{"city": "Paris"}{"tz": "Europe/Oslo"}']];
let parseError; // what JSON.parse itself says about the joined text (V8's wording)
try {
  JSON.parse(merged[0][2]);
} catch (error) {
  parseError = error.message;
}
const shown = JSON.stringify(calls) === JSON.stringify(merged) && ran.length === 0 && raised === null
  && JSON.stringify(toolMessages) === JSON.stringify([['call_b', parseError]]);
if (!shown) {
  console.log('CHANGED: the two index-0 calls are no longer merged into one get_time call that cannot run');
} else {
  console.log('SHOWN: two calls on index 0 are merged into one: the last id (call_b) and name (get_time) win, the argument texts are concatenated, JSON.parse refuses them, neither tool runs and the model is told the parse error');
  process.exitCode = 1;
}
