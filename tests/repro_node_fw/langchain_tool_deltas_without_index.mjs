#!/usr/bin/env node
// LangChain.js (@langchain/openai 1.6.0 ChatOpenAI, bindTools, `.stream()`, AIMessageChunk
// `.concat()`): tool-call deltas without an `index` key (Mistral, Gemini's OpenAI endpoint) are
// never merged: ChatOpenAI copies each delta's (missing) index into its ToolCallChunk, and
// @langchain/core merges chunks only on equal indices, so every delta becomes a call of its own.
//
// Not a defect: the matrix lists this input shape outside the target (outside_target "no_index":
// LangChain's ToolCallChunk documents that chunks merge only on equal indices). The suite's
// recording: cassettes/openai-compatible/dialect_no_index.yaml.
//
// Run: node langchain_tool_deltas_without_index.mjs. Exit 1 while the behaviour is there, 0 once it
// changed, 2 when it cannot run. Offline: the body is served by ChatOpenAI's own
// `configuration.fetch` option; the global fetch and sockets throw.
import net from 'node:net';

globalThis.fetch = async input => {
  throw new Error(`network access attempted (global fetch ${String(input?.url ?? input)})`);
};
net.Socket.prototype.connect = function connect() {
  throw new Error('network access attempted (net.Socket#connect)');
};

let ChatOpenAI;
try {
  ({ ChatOpenAI } = await import('@langchain/openai'));
} catch (error) {
  console.error(`cannot run: ${error.message}`);
  process.exit(2);
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const toolDelta = call => chunk({ tool_calls: [call] }); // no `index` key
const args = text => toolDelta({ function: { arguments: text } });
// Two calls, each opened by a delta with its id and name, its arguments in several deltas; no index.
// 11 tool deltas: get_weather opener + 6 fragments, get_time opener + 3 fragments.
const body =
  chunk({ role: 'assistant', content: '' }) +
  chunk({ content: 'Checking both.' }) +
  toolDelta({ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }) +
  args('{"city"') + args(': "Pari') + args('s", "un') + args('it": "c') + args('elsius"') + args('}') +
  toolDelta({ id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }) +
  args('{"tz": ') + args('"Europe') + args('/Oslo"}') +
  chunk({}, 'tool_calls') +
  'data: [DONE]\n\n';

const model = new ChatOpenAI({
  model: 'gpt-4o-mini',
  apiKey: 'offline',
  maxRetries: 0,
  configuration: {
    baseURL: 'https://api.openai.invalid/v1',
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  },
});
const tools = ['get_weather', 'get_time'].map(name => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } }));
let message;
let raised = null;
try {
  for await (const piece of await model.bindTools(tools).stream('weather and time?')) message = message ? message.concat(piece) : piece;
} catch (error) {
  raised = `${error.name}: ${error.message}`;
}

console.log('what the stream says: get_weather call_a {"city": "Paris", "unit": "celsius"} and get_time call_b {"tz": "Europe/Oslo"}, in 11 tool deltas without `index`; finish_reason "tool_calls"');
console.log(`what LangChain gives: raised ${JSON.stringify(raised)}`);
console.log(`  tool_calls (${message?.tool_calls?.length}) ${JSON.stringify(message?.tool_calls)}`);
console.log(`  invalid_tool_calls (${message?.invalid_tool_calls?.length}) ${JSON.stringify(message?.invalid_tool_calls)}`);
console.log(`  tool_call_chunks (${message?.tool_call_chunks?.length}) ${JSON.stringify(message?.tool_call_chunks)}`);
console.log(`  response_metadata.finish_reason ${JSON.stringify(message?.response_metadata?.finish_reason)}`);

// Written by hand from the body: the two opening deltas become calls with their id and name but
// empty arguments ({}), and each of the 9 argument deltas a nameless call of its own; none of those
// fragments is JSON by itself, so all 9 are invalid ("Malformed args."). 11 calls in all.
const fragments = ['{"city"', ': "Pari', 's", "un', 'it": "c', 'elsius"', '}', '{"tz": ', '"Europe', '/Oslo"}'];
const valid = JSON.stringify([['call_a', 'get_weather', {}], ['call_b', 'get_time', {}]]);
const seenValid = JSON.stringify((message?.tool_calls ?? []).map(call => [call.id, call.name, call.args]));
const invalid = (message?.invalid_tool_calls ?? []).map(call => [call.name ?? '', call.args, call.error]);
const invalidAsExpected = invalid.length === fragments.length
  // (the invalid entries' args come back whitespace-trimmed: '{"tz": ' is listed as '{"tz":')
  && invalid.every(([name, args, error], at) => name === '' && args === fragments[at].trim() && error === 'Malformed args.');
if (raised === null && seenValid === valid && invalidAsExpected) {
  console.log('SHOWN: tool deltas without `index` are never merged: each of the 11 deltas becomes its own call: get_weather (call_a) and get_time (call_b) in `tool_calls` with empty arguments {}, and 9 nameless argument fragments in `invalid_tool_calls` ("Malformed args."); nothing is raised');
  process.exitCode = 1;
} else {
  console.log('CHANGED: tool deltas without `index` no longer come out as 2 argument-less calls plus 9 nameless invalid fragments');
}
