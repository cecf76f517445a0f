// LangChain.js: a streamed tool call without a provider id lands in `invalid_tool_calls` ("Malformed
// args.") although its arguments are valid JSON, so it never runs.
//
// Layer: @langchain/core (collapseToolCallChunks throws "Malformed tool call chunk args." when the
// grouped chunks have no id), read through @langchain/openai's ChatOpenAI. LangChain's own `ToolCall`
// type has `id?: string`, and a non-streamed (invoke) message keeps such a call in `tool_calls`.
// Harm: lost (the application's ToolNode never runs it; the error names the arguments, not the id).
// Realism: observed; vLLM streamed calls without any id (https://github.com/vllm-project/vllm/issues/18412).
// Related upstream: https://github.com/langchain-ai/langchainjs/pull/8581 (merged: "handle tool call
// chunks without IDs in streaming mode"). Suite bodies: generated/openai-chat/005, 006, 007.
//
// Run: node langchain_call_without_id_is_invalid.mjs. Exit 1 while the defect is there, 0 once fixed,
// 2 when it cannot run. Offline: the body is served by ChatOpenAI's own `configuration.fetch` option.
let ChatOpenAI;
try {
  ({ ChatOpenAI } = await import('@langchain/openai'));
} catch (error) {
  console.error(`cannot run: ${error.message}`);
  process.exit(2);
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

// A call with index, type, name and complete arguments, but no id (as vLLM streamed it).
const body =
  chunk({ role: 'assistant', content: '' }) +
  chunk({ tool_calls: [{ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Paris"}' } }] }) +
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
const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }];
let message;
for await (const piece of await model.bindTools(tools).stream('weather?')) message = message ? message.concat(piece) : piece;

console.log('what the stream says: get_weather (no id) arguments {"city": "Paris"}; finish_reason "tool_calls"');
console.log(`what LangChain gives: tool_calls ${JSON.stringify(message.tool_calls)}`);
console.log(`  invalid_tool_calls ${JSON.stringify(message.invalid_tool_calls)}`);
const ran = message.tool_calls.some(call => call.name === 'get_weather' && call.args?.city === 'Paris');
console.log(ran
  ? 'FIXED: the id-less call is a valid tool call'
  : 'SHOWN: a call with valid arguments is reported as malformed ("Malformed args.") and never runs, because it has no id (documented: streamed calls need an id)');
process.exitCode = ran ? 0 : 1;
