#!/usr/bin/env node
// LangChain.js (@langchain/openai 1.6.0 ChatOpenAI, bindTools, `.stream()`, AIMessageChunk
// `.concat()`): a body cut right after a call's complete arguments, with no finish chunk and no
// `data: [DONE]`, ends the stream quietly: nothing is raised, the concatenated message holds the
// call in `tool_calls` with its parsed arguments, and `response_metadata.finish_reason` is unset.
//
// Not a defect: the matrix records this as the caller's decision (policy "incomplete": the missing
// finish reason is the caller's signal; Ollama also sends none on complete responses). The suite's
// recording: cassettes/openai-chat/stream_cut_after_arguments.yaml.
//
// Run: node langchain_cut_stream_gives_no_error.mjs. Exit 1 while the behaviour is there, 0 once it
// changed (e.g. the cut is raised), 2 when it cannot run. Offline: the body is served by
// ChatOpenAI's own `configuration.fetch` option; the global fetch and sockets throw.
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
// One call, write_file, whose arguments are complete JSON; then the body ends (no finish, no [DONE]).
const body =
  chunk({ role: 'assistant', content: '' }) +
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path": "a.py", ' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"content": "x = 1"}' } }] });

// The same call finished normally, for contrast: finish chunk and [DONE].
const finished = body + chunk({}, 'tool_calls') + 'data: [DONE]\n\n';

async function streamed(sse) {
  const model = new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: 'offline',
    maxRetries: 0,
    configuration: {
      baseURL: 'https://api.openai.invalid/v1',
      fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    },
  });
  const tools = [{ type: 'function', function: { name: 'write_file', parameters: { type: 'object', properties: {} } } }];
  let message;
  let raised = null;
  try {
    for await (const piece of await model.bindTools(tools).stream('write a.py')) message = message ? message.concat(piece) : piece;
  } catch (error) {
    raised = `${error.name}: ${error.message}`;
  }
  return { message, raised };
}
const { message, raised } = await streamed(body);
const control = await streamed(finished);

const calls = (message?.tool_calls ?? []).map(call => [call.id, call.name, call.args]);
console.log('what the stream says: write_file call_1 {"path": "a.py", "content": "x = 1"}, then the body ends: no finish chunk, no [DONE]');
console.log(`what LangChain gives: raised ${JSON.stringify(raised)}`);
console.log(`  tool_calls ${JSON.stringify(calls)}`);
console.log(`  invalid_tool_calls ${JSON.stringify(message?.invalid_tool_calls)}`);
console.log(`  response_metadata.finish_reason ${JSON.stringify(message?.response_metadata?.finish_reason)}`);
console.log(`  (the same body finished with finish_reason "tool_calls" and [DONE]: raised ${JSON.stringify(control.raised)}, finish_reason ${JSON.stringify(control.message?.response_metadata?.finish_reason)})`);
const expected = JSON.stringify([['call_1', 'write_file', { path: 'a.py', content: 'x = 1' }]]);
const shown = raised === null && JSON.stringify(calls) === expected && message.response_metadata?.finish_reason === undefined
  && control.raised === null && control.message?.response_metadata?.finish_reason === 'tool_calls';
if (shown) {
  console.log('SHOWN: a stream cut after a complete call, without finish chunk or [DONE], ends quietly: nothing is raised, the call is in `tool_calls`, and `response_metadata.finish_reason` is unset (a finished stream has "tool_calls" there)');
  process.exitCode = 1;
} else {
  console.log('CHANGED: the cut stream is no longer delivered quietly as a finished-looking call without a finish reason');
}
