#!/usr/bin/env node
// openai (npm) 7.59.0, `client.chat.completions.runTools({ stream: true, tools })`: a call whose
// argument text is "" (OpenAI-compatible servers send this for a call without arguments; OpenAI
// itself sends "{}") is handed to the tool's `parse`; with the documented `parse: JSON.parse`,
// JSON.parse("") throws, the runner writes the parse error as the call's tool message (the model is
// told the error) and the tool function never runs.
//
// Not a defect: the matrix lists this input shape outside the SDK's target (outside_target
// "arguments_empty": reading an empty text is the `parse` the caller passes). The suite's recording:
// cassettes/openai-chat/no_argument_call.yaml.
//
// Run: node openai_empty_arguments_refused_by_json_parse.mjs. Exit 1 while the behaviour is there,
// 0 once it changed (the tool runs), 2 when it cannot run. Offline: the body is served through the
// client's `fetch` option; the global fetch and sockets throw.
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
// One call, list_files, whose whole argument text is "", then finish_reason "tool_calls".
const body =
  chunk({ role: 'assistant', content: '' }) +
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'list_files', arguments: '' } }] }) +
  chunk({}, 'tool_calls') +
  'data: [DONE]\n\n';
// Every later request (the runner's second turn, carrying the tool messages) gets a plain text reply.
const followUp = chunk({ role: 'assistant', content: 'done' }, 'stop') + 'data: [DONE]\n\n';

let requests = 0;
const client = new OpenAI({
  apiKey: 'offline', baseURL: 'https://offline.invalid/v1', maxRetries: 0,
  fetch: async () => new Response(++requests === 1 ? body : followUp, { headers: { 'content-type': 'text/event-stream' } }),
});

const ran = [];
const tools = [{
  type: 'function',
  function: {
    name: 'list_files',
    parameters: { type: 'object', properties: {} },
    parse: JSON.parse,
    function: args => {
      ran.push(args);
      return 'a.py b.py';
    },
  },
}];
let raised = null;
const runner = client.chat.completions.runTools({ model: 'm', messages: [{ role: 'user', content: 'list the files' }], stream: true, tools });
try {
  await runner.done();
} catch (error) {
  raised = `${error.name}: ${error.message}`;
}
// What JSON.parse itself says about "" (V8's wording, read here rather than written by hand).
let parseError;
try {
  JSON.parse('');
} catch (error) {
  parseError = error.message;
}
const toolMessages = runner.messages.filter(message => message.role === 'tool').map(message => [message.tool_call_id, message.content]);

console.log('the stream says: list_files call_1 with argument text "" (no arguments), finish_reason "tool_calls"');
console.log(`the runner: tool function ran ${ran.length} time(s) ${JSON.stringify(ran)}; raised ${JSON.stringify(raised)}`);
console.log(`  tool messages sent back to the model: ${JSON.stringify(toolMessages)}`);
console.log(`  requests made: ${requests}`);
const shown = ran.length === 0 && raised === null && JSON.stringify(toolMessages) === JSON.stringify([['call_1', parseError]]);
if (!shown) {
  console.log('CHANGED: the runner no longer answers the empty-argument call with JSON.parse\'s error instead of running it');
} else {
  console.log('SHOWN: with the documented `parse: JSON.parse`, a call whose argument text is "" never runs: JSON.parse("") throws and the runner answers the model with the parse error as the tool message');
  process.exitCode = 1;
}
