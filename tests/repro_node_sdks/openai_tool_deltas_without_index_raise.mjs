#!/usr/bin/env node
// openai (npm) 7.59.0, `client.chat.completions.runTools({ stream: true, tools })`: tool-call
// deltas that carry no `index` key (Mistral, Gemini's OpenAI endpoint) are refused by the stream
// accumulator: ChatCompletionStream throws `OpenAIError: Chat completion stream contains an invalid
// tool call index: undefined` at the first such delta, the run ends with that error, and no tool runs.
//
// Not a defect: the matrix lists this input shape outside the SDK's target (outside_target
// "no_index": OpenAI's chunks always number their calls; the error is surfaced, not swallowed). The
// suite's recording: cassettes/openai-compatible/dialect_no_index.yaml.
//
// Run: node openai_tool_deltas_without_index_raise.mjs. Exit 1 while the behaviour is there, 0 once
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
const toolDelta = call => chunk({ tool_calls: [call] }); // no `index` key
// Two calls, each opened by a delta with its id and name; no delta has an index.
const body =
  chunk({ role: 'assistant', content: '' }) +
  toolDelta({ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }) +
  toolDelta({ function: { arguments: '{"city": "Paris"}' } }) +
  toolDelta({ id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }) +
  toolDelta({ function: { arguments: '{"tz": "Europe/Oslo"}' } }) +
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
  raised = `${error.constructor?.name ?? error.name}: ${error.message}`;
}

console.log('the stream says: get_weather call_a {"city": "Paris"} and get_time call_b {"tz": "Europe/Oslo"}, tool deltas without `index`; finish_reason "tool_calls"');
console.log(`the runner: raised ${JSON.stringify(raised)}`);
console.log(`  tools ran ${JSON.stringify(ran)}; requests made: ${requests}`);
const expected = 'OpenAIError: Chat completion stream contains an invalid tool call index: undefined';
if (raised === expected && ran.length === 0) {
  console.log('SHOWN: tool deltas without an `index` key make the SDK raise `OpenAIError: Chat completion stream contains an invalid tool call index: undefined`; the run ends with that error and no tool runs');
  process.exitCode = 1;
} else {
  console.log('CHANGED: tool deltas without an `index` key no longer end the run with the invalid-index error');
}
