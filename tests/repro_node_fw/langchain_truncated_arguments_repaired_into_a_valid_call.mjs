// LangChain.js: a tool call cut by the token limit is repaired into a valid-looking `tool_calls` entry.
//
// Layer: @langchain/core (collapseToolCallChunks parses the joined argument text with
// parsePartialJson, which closes the open string and object), read through @langchain/openai's
// ChatOpenAI. LangGraph's ToolNode / createAgent runs `tool_calls`: the tool runs with a `content`
// the model never finished. Harm: ran_wrong. Realism: every provider stops at max_tokens with
// finish_reason "length" (OpenAI Chat Completions). Suite recordings: openai-chat/truncated_max_tokens,
// (openai-chat/stream_cut_mid_call is the same repair on a body cut without its finish chunk).
// Upstream: https://github.com/langchain-ai/langchainjs/issues/11469 (open), PR #11471.
//
// Run: node langchain_truncated_arguments_repaired_into_a_valid_call.mjs   (next to a node_modules with
// @langchain/openai 1.6.0 and @langchain/core 1.4.0). Exit 1 while the defect is there, 0 once fixed,
// 2 when it cannot run. Offline: the body is served by ChatOpenAI's own `configuration.fetch` option.
let ChatOpenAI;
try {
  ({ ChatOpenAI } = await import('@langchain/openai'));
} catch (error) {
  console.error(`cannot run: ${error.message}`);
  process.exit(2);
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

// The model hit its token limit inside the `content` string: the stream ends on finish_reason "length".
const body =
  chunk({ role: 'assistant', content: '' }) +
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path": "x.py", "content": "def f():\\n' } }] }) +
  chunk({}, 'length') +
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
const tools = [{ type: 'function', function: { name: 'write_file', parameters: { type: 'object', properties: {} } } }];
let message;
for await (const piece of await model.bindTools(tools).stream('write the file')) message = message ? message.concat(piece) : piece;

console.log('what the stream says: write_file id=call_1 arguments cut at \'{"path": "x.py", "content": "def f():\\n\' ; finish_reason "length"');
console.log(`what LangChain gives: finish_reason=${message.response_metadata.finish_reason}`);
console.log(`  tool_calls (ToolNode runs these):    ${JSON.stringify(message.tool_calls)}`);
console.log(`  invalid_tool_calls (never run):      ${JSON.stringify(message.invalid_tool_calls)}`);
const defect = message.tool_calls.some(call => call.name === 'write_file');
console.log(defect
  ? 'DEFECT: the cut arguments were repaired into a complete-looking call, which ToolNode runs'
  : 'FIXED: the truncated call is not among the calls that run');
process.exitCode = defect ? 1 : 0;
