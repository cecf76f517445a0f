// LangChain.js: two calls sent on index 0 (each with its own id): the second call's arguments are
// appended to the first call's, so the first becomes invalid and the second runs with {}.
//
// Layer: @langchain/core. concat() keeps a tool_call_chunk with a new id on an occupied index apart,
// but an id-less continuation on that index is merged into the first chunk of the index. The same
// defect as langchain-core (Python)'s
// test_continuation_after_a_second_id_on_an_index_goes_to_the_first_call.
// Harm: ran_wrong (get_time runs with {} instead of {"tz": "Europe/Oslo"}; get_weather is lost).
// Realism: observed; Ollama's OpenAI-compatible API puts every call on index 0
// (https://github.com/ollama/ollama/issues/15457). Suite recording: openai-compatible/dialect_index_always_zero.
//
// Run: node langchain_index_zero_second_call_runs_with_empty_arguments.mjs. Exit 1 while the defect
// is there, 0 once fixed, 2 when it cannot run. Offline: served by ChatOpenAI's `configuration.fetch`.
let ChatOpenAI;
try {
  ({ ChatOpenAI } = await import('@langchain/openai'));
} catch (error) {
  console.error(`cannot run: ${error.message}`);
  process.exit(2);
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const call = entry => chunk({ tool_calls: [entry] });

const body =
  chunk({ role: 'assistant', content: '' }) +
  call({ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }) +
  call({ index: 0, function: { arguments: '{"city": "Paris"}' } }) +
  call({ index: 0, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }) +
  call({ index: 0, function: { arguments: '{"tz": "Europe/Oslo"}' } }) +
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
for await (const piece of await model.bindTools(tools).stream('both')) message = message ? message.concat(piece) : piece;

console.log('what the stream says: get_weather id=call_a {"city": "Paris"}, then get_time id=call_b {"tz": "Europe/Oslo"}, both on index 0');
console.log(`what LangChain gives: tool_calls ${JSON.stringify(message.tool_calls)}`);
console.log(`  invalid_tool_calls ${JSON.stringify(message.invalid_tool_calls)}`);
const byName = Object.fromEntries(message.tool_calls.map(c => [c.name, c.args]));
const fixed = byName.get_weather?.city === 'Paris' && byName.get_time?.tz === 'Europe/Oslo';
console.log(fixed ? 'FIXED: both calls run with their own arguments' : 'DEFECT: the second call runs with the wrong arguments (the first call\'s text swallowed them)');
process.exitCode = fixed ? 0 : 1;
