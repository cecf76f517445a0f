"""The reviewed list of input shapes: which ones real servers have been seen sending, with the evidence.

Every shape the suite generates or ships is one of these. A shape is ``observed`` when a named
server was shown sending it (a real recording, a public issue quoting the server's output, or the
server's own code), and ``theoretical`` otherwise; the evidence says where, so a maintainer can
check it. Evidence that a library mishandles a shape does not count unless it names the server
that sent it. This is the one place to change a shape's realism: add the evidence here, in review.

Delta-level shapes describe the provider-agnostic stream a faithful converter makes of a server's
stream (``ChunkResponse`` with ``ToolCallDelta`` s); the byte-level shapes (``no_index`` ...
``sse_comments``) describe OpenAI-compatible Chat Completions bodies. ``OPENAI_OWN_STREAM`` lists
the shapes OpenAI's own Chat Completions stream shows.

Gathered on 2026-11-28 from the bug taxonomy's evidence, the third-party recordings in
``shared/real-recordings`` (paths relative to that folder) and public issues, pull requests and
server code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from conformance.verdict.realism import Realism

__all__ = ["OBSERVED", "OPENAI_OWN_STREAM", "SERVER_APIS", "SHAPES", "Shape", "observed", "realism_of", "server_names"]


@dataclass(frozen=True)
class Shape:
    """One input shape: its id, realism, what it is, who sends it, and the evidence (strongest first)."""

    id: str
    level: Literal["observed", "theoretical"]
    summary: str
    servers: str
    evidence: tuple[str, ...]
    why: str


_SHAPES: tuple[Shape, ...] = (
    Shape(
        "arguments_fragmented",
        "observed",
        "a call's argument text arrives over several deltas, cut at arbitrary characters",
        servers="OpenAI Chat Completions, Azure OpenAI, Anthropic Messages, DeepSeek, llama.cpp server, Bedrock ConverseStream, OpenRouter, Alibaba DashScope, OpenAI Responses, Writer, vLLM, Vertex AI Gemini (streamed `partialArgs`)",
        evidence=(
            'recording: real-recordings/anthropic/long_args_many_deltas.sse — claude-sonnet-4 (api.anthropic.com): 109 `input_json_delta` fragments, cut inside strings and once inside an escape: fragment `"n\\\\"` is followed by `"n- General"`, i.e. the `\\n` escape is split across two deltas',
            'recording: real-recordings/openai_chat/parallel_same_tool_no_usage.sse — gpt-3.5-turbo-0125 (api.openai.com): arguments arrive as `{"lo`, `catio`, `n": "S`, `an F`, `ranci`, `sco"}`',
            'recording: real-recordings/deepseek/single_call_11_chunks.jsonl — deepseek-reasoner: arguments over 10 chunks `{`, `"`, `location`, `"`, `: `, `"`, `San`, ` Francisco`, ...',
            "recording: real-recordings/llama_cpp/gpt_oss_single_call.sse — llama.cpp server (build b7010): arguments over several deltas (`location`, `Flor`, `ence`), the name sent once",
            "recording: real-recordings/writer/seven_parallel_calls_message_and_delta.sse — Writer palmyra-x4: each call's arguments over several deltas, in the same stream as its null continuation fields",
            'issue: https://github.com/vllm-project/vllm/issues/18412 — vLLM stream quoted with argument fragments (`"arguments":"{\\""`, ...)',
            "recording: real-recordings/gemini/partial_args_missing_terminator.jsonl — Vertex AI gemini-3-flash-preview streaming `functionCall.partialArgs` (`jsonPath`, `stringValue`, `willContinue`) over several chunks",
        ),
        why="Every incremental server splits at arbitrary character positions, including inside strings and (Anthropic) inside an escape sequence. A split inside a multi-byte character was not seen: no recording has non-ASCII arguments, and at the delta level such a split would need an escaped surrogate pair. Gemini sends whole calls unless argument streaming is asked for (Vertex `partialArgs`).",
    ),
    Shape(
        "whole_call_in_one_delta",
        "observed",
        "id, name and the complete arguments in one delta",
        servers="xAI (grok-4-fast), Groq (llama-3.3-70b), Mistral API, Gemini OpenAI-compatible endpoint, Gemini native (functionCall parts)",
        evidence=(
            'recording: real-recordings/xai/grok4_parallel_whole_calls.sse — each chunk carries `{"id":"call_55070233","function":{"name":"add","arguments":"{\\"a\\":2,\\"b\\":3}"},"index":0,"type":"function"}`',
            'recording: real-recordings/groq/llama_empty_args_whole_call.jsonl — one chunk with `"id":"tk85n1k4m"`, name `weather`, arguments `"{}"`',
            'issue: https://github.com/noho/dayu-agent/issues/45 — capture from Gemini\'s `/v1beta/openai` endpoint (gemini-3.1-flash-lite-preview): "每个 tool call 在单个 delta 中一次给全" (each call complete in one delta), with the captured delta quoted',
        ),
        why="Several servers send no argument fragments at all. Gemini native parts (e.g. real-recordings/gemini/parallel_same_tool.sse) are always whole calls.",
    ),
    Shape(
        "id_late",
        "theoretical",
        "a call's provider id first arrives on a later delta than the call's first",
        servers="none known",
        evidence=(
            'issue: https://github.com/pipecat-ai/pipecat/issues/4987 — maintainer: "We couldn\'t reproduce `id` and `function.name` arriving in separate deltas on any of 15 OpenAI-compatible providers, including Azure OpenAI direct"',
            'issue: https://github.com/Dicklesworthstone/pi_agent_rust/issues/129 — raw capture with deepseek-v4-pro: "The provider sends the tool-call `id` on the first `tool_calls` delta" (contradicts the cassette\'s "DeepSeek V4" claim)',
            'issue: https://github.com/use-agent-os/agent-os/issues/3171 — the only repro of "chunk 0 with only index, chunk 1 with id" is hand-made ("Stream a tool call from an OpenAI-compatible endpoint where..."), with no server named',
        ),
        why="No recording or issue shows a named server that sends a call's id only on a later delta. The project cassette's claim (DeepSeek V4, vLLM) is contradicted by a DeepSeek V4 capture. The koog report (https://github.com/JetBrains/koog/issues/2111) only speculates that the id \"may be null initially\".",
    ),
    Shape(
        "id_restated",
        "observed",
        "a call's id is repeated on its continuation deltas",
        servers="LiteLLM proxy; vLLM (GLM parsers: final remaining-arguments chunk); mlx-openai-server (after PR 216)",
        evidence=(
            'issue: https://github.com/BerriAI/litellm/issues/20480 — "When streaming tool calls through LiteLLM proxy ... `id` is sent on **every** chunk"',
            'issue: https://github.com/vllm-project/vllm/issues/44098 — vLLM main: `_create_remaining_args_delta()` "can send `id`, `type`, and `function.name` again even though those fields were already emitted in the first chunk"',
            'issue: https://github.com/cubist38/mlx-openai-server/pull/216 — the server now gives each call "a unique, stable `id` that persists across all deltas" ("Reuse the stored ID for all subsequent deltas")',
        ),
        why='Proxies and local servers that rebuild each delta from stored state repeat the id. No recording shows it (QUIRKS.md: "id repeated on every chunk: not observed"). Poolside repeats an id on continuations but a different one (https://github.com/poolsideai/pool/issues/9), which is an id change, not a restatement.',
    ),
    Shape(
        "empty_string_continuation_fields",
        "observed",
        'continuation deltas carry "" as id or name',
        servers="Alibaba DashScope (qwen3-max), Mistral API (devstral; zai-glm-5-2 fixture), vLLM (Cohere Command parser before PR 44907), SGLang (early 2025), LiteLLM proxy",
        evidence=(
            'recording: real-recordings/alibaba/qwen_single_call.jsonl — continuations carry `"id":""` (e.g. `{"index":0,"id":"","type":"function","function":{"arguments":"{\\"location\\": \\"San Francisco"}}`)',
            'recording: real-recordings/mistral/incremental_empty_name_continuation.jsonl — vercel/ai Mistral fixture (model zai-glm-5-2): second delta `{"type":"function","function":{"name":"","arguments":"{\\"query\\": ...}"},"index":0}`',
            'issue: https://github.com/vllm-project/vllm/pull/44907 — vLLM "Before fix": `tool_delta_3: [{"id":"","type":"function","index":0,"function":{"name":"","arguments":"{\\""}}]`',
        ),
        why='`""` ids and names on continuations are common. Mistral\'s own devstral stream also sends `"name":""` continuations (https://github.com/zed-industries/zed/pull/53605), together with the literal string `"null"` as an id.',
    ),
    Shape(
        "null_continuation_fields",
        "observed",
        "continuation deltas carry explicit null id, name or type",
        servers="Writer (palmyra-x4), vLLM (Ministral stream), the opencode chat/completions upstream behind deepseek-acp",
        evidence=(
            'recording: real-recordings/writer/seven_parallel_calls_message_and_delta.sse — continuations `{"index":0,"id":null,"type":null,"function":{"name":null,"arguments":" \\"Zakopane\\"}"}}`',
            'issue: https://github.com/vllm-project/vllm/pull/34887 — vLLM stream quoted: `{ "id": null, "type": "function", "index": 0, "function": { "arguments": "code" } }`',
            'issue: https://github.com/xintaofei/deepseek-acp/issues/4 — "这是实际观察到的 opencode chat/completions 上游行为" (observed upstream behaviour): continuation `"id":null,"type":null,"function":{"name":null,...}`',
        ),
        why='Pydantic-based servers that serialise unset optional fields emit explicit nulls. Writer also sends `"arguments":null` in the header delta.',
    ),
    Shape(
        "no_id",
        "observed",
        "a call never gets a provider id",
        servers="Gemini native / Vertex AI (2.5 models, gemini-3-pro-preview, gemini-3-flash JSON-array stream), vLLM (2025 streaming bug; glm47 finish chunk before PR 31438)",
        evidence=(
            'recording: real-recordings/gemini/vertex_parallel.sse — Vertex gemini-2.5-flash: `{"functionCall": {"name": "add","args": {"b": 3,"a": 2}}}` with no `id` (both calls)',
            'issue: https://github.com/vllm-project/vllm/issues/18412 — vLLM stream quoted: `"tool_calls":[{"index":0,"function":{"name":"get_current_weather","arguments":"{\\""}}]` and no `id` on any chunk',
            "recording: real-recordings/gemini/thought_signature_empty_args.sse — gemini-3-pro-preview functionCall without `id`",
            "issue: https://github.com/vllm-project/vllm/pull/31438 — vLLM glm47 parser: the finish delta of a call carried no id, type or name (fixed December 2025)",
        ),
        why="Gemini ids are optional (gemini-3-flash SSE recordings do carry short ids, e.g. real-recordings/gemini/function_call_with_id.sse). On the chat wire, vLLM streamed calls with no id at all.",
    ),
    Shape(
        "name_fragmented",
        "theoretical",
        "a call's name arrives in several different fragments",
        servers="none known",
        evidence=(
            'issue: https://github.com/openclaw/openclaw/pull/130532 — 17 real Mistral streaming requests on 3 models: "No fragmented function names observed; every tool call arrived in a single SSE chunk"',
            'issue: https://github.com/ankit373/hydra/issues/957 — the `get_wea` + `ther` stream comes from "A stub speaking the OpenAI SSE dialect on LM Studio\'s port", not from a real server',
            'issue: https://github.com/continuedev/continue/pull/5849 — asserts "some models like gemini can stream function name in chunks like "edit_ex" + "isting_file"", but shows no capture and does not say which endpoint',
        ),
        why='The only concrete examples are stubs and synthetic SDK tests (openclaw #127603). The one provider claim (Gemini, in Continue) has no capture. llama.cpp\'s maintainer notes that OpenAI and Anthropic send the name "in one go" (https://github.com/ggml-org/llama.cpp/pull/13800).',
    ),
    Shape(
        "name_restated",
        "observed",
        "the whole name is repeated on continuation deltas",
        servers="MiniMax M2.7 via NVIDIA NIM, vLLM (May 2025 stream in vllm#18412; GLM final chunk on main per vllm#44098), llama.cpp server (builds between PR 12379 and PR 13800, May 2025), vLLM-Ascend GLM parser (before PR 8178)",
        evidence=(
            'issue: https://github.com/NousResearch/hermes-agent/issues/8259 — `minimaxai/minimax-m2.7` via `integrate.api.nvidia.com`: "sends the **full name in every chunk**, causing it to concatenate: `"terminal"` + `"terminal"`"',
            'issue: https://github.com/vllm-project/vllm/issues/18412 — vLLM chunks quoted each with `"function":{"name":"get_current_weather","arguments":...}` (name on every chunk)',
            "issue: https://github.com/ggml-org/llama.cpp/issues/13774 — llama.cpp server build 5481: only the arguments are chunked, the name is repeated on every delta",
            'issue: https://github.com/ggml-org/llama.cpp/pull/13800 — llama.cpp server fix: "Return `tool_call.function.name` as a delta, not repeated over and over" (current builds send the name once)',
        ),
        why="The NIM symptom (`read_fileread_file`, `terminalterminal` from a `+=` accumulator) was seen by several users. The vLLM capture shows the restated name directly.",
    ),
    Shape(
        "name_late",
        "theoretical",
        "argument text arrives before the call's name is complete",
        servers="none known (the captures below show an empty name first, with no argument text before the name)",
        evidence=(
            'issue: https://github.com/vllm-project/vllm/pull/44907 — vLLM "Before fix": `tool_delta_1: [{"id":"0",...,"function":{"name":"","arguments":""}}]` then `tool_delta_2: [{"id":"",...,"function":{"name":"bash","arguments":""}}]`',
            'issue: https://github.com/jjang-ai/vmlx/pull/244 — "reproduced live": opening delta `{index:0, id:call_x, function:{name:"", arguments:""}}`, then `{... name:"bash", arguments:"{...}"}`',
            'issue: https://github.com/vercel/ai/pull/16507 — "Command-a model running on VLLM returns the problematic format": first `function.name` is `""`, real name later',
        ),
        why='Theoretical as detected (argument bytes before the name). What the captures show is narrower: the call\'s first delta carries an id and an empty name, the name arrives on a later delta, and the argument text before it is `""` (vLLM before PR 44907, vmlx before PR 244, Command-A on vLLM). vercel/ai#14722 describes the wider variant but names no provider. Tag observed once a capture shows argument text before the name.',
    ),
    Shape(
        "no_name",
        "observed",
        "a call never gets a name",
        servers="xLLM (GLM-4.7, before PR 722), vLLM glm47 parser (finish chunk before PR 31438)",
        evidence=(
            'issue: https://github.com/xLLM-AI/xllm/pull/722 — the server sent "the tool call with an empty name" and set "`current_tool_name_sent_ = true`, preventing the name from ever being sent later"',
            'issue: https://github.com/vllm-project/vllm/pull/31438 — the finish chunk "overwrites the tool parser\'s `DeltaMessage` ... This loses the `id`, `type`, and `function.name` fields". Tested with GLM-4.7-AWQ, where GLM parsers "only emit a single tool_call delta at the end"',
        ),
        why="Both are server bugs in which a call's only name was empty or stripped. They are fixed upstream, but older deployments still send the shape.",
    ),
    Shape(
        "arguments_continue_across_ids",
        "theoretical",
        "a new id on an occupied index whose argument text completes the previous call's (their concatenation parses)",
        servers="none known",
        evidence=(),
        why="Drawn on purpose so that a handler ignoring the id change would run one merged call that parses; no server is known to split one object's text across two call ids. Its plain form, a no-argument call then another call on the same index, needs no such split (index_reused, arguments_empty).",
    ),
    Shape(
        "call_restated",
        "theoretical",
        "a complete call is sent again in a later chunk under the same id (Gemini `functionCall` parts)",
        servers="none known",
        evidence=(
            'issue: https://github.com/langchain-ai/langchainjs/pull/11461 — live Gemini traces (gemini-2.5-flash, gemini-3.1-pro-preview, single and parallel calls, with and without thinking): "a function call\'s `id` (rarely present at all) and its `thoughtSignature` always arrive together in a single delta — there is no continuation"',
        ),
        why="Framework fixes describe Gemini re-sending a finished call (the bug taxonomy's B08), but none quotes a captured stream, and live traces taken to check it showed none.",
    ),
    Shape(
        "interleaved_calls",
        "theoretical",
        "deltas of parallel calls interleave (call 0, call 1, call 0 again)",
        servers="none known",
        evidence=(
            'recording: real-recordings/QUIRKS.md — "No recording interleaves argument fragments of two parallel calls ... (checked mechanically over all SSE/JSONL files)". Re-checked here: openai_chat/parallel_same_tool_no_usage.sse, openrouter/*.sse, writer/*.sse and anthropic/*.sse all finish call 0 before call 1',
            'issue: https://github.com/mcowger/plexus/pull/694 — interleaved argument deltas appear only in a synthetic regression test ("cover parallel calls ... and interleaved argument deltas")',
        ),
        why='The format allows it (Responses deltas carry `item_id`), but no capture from any named server shows call 0, call 1, call 0 fragments. The project\'s own cassette says "never seen in recordings".',
    ),
    Shape(
        "index_reused",
        "observed",
        "a new call id arrives on an index an earlier call used",
        servers="Ollama OpenAI-compatible API (0.20.x), Atlas inference server, Plexus gateway (Responses→Chat)",
        evidence=(
            'issue: https://github.com/ollama/ollama/issues/15457 — `/v1/chat/completions` stream: "all tool call chunks have `index: 0` instead of incrementing indices", with the actual output quoted (`"tool_calls":[{"id":"abc123",...`)',
            'issue: https://github.com/Avarok-Cybersecurity/atlas/issues/33 — "two consecutive SSE chunks both opening a tool call at `index: 0` with two different `id` values" (`call_0000000000000002`, `call_0000000000000003`)',
            'issue: https://github.com/mcowger/plexus/issues/691 — captured trace: the gateway\'s translated chunks "use `index: 0` for every call"',
        ),
        why="A new id on an occupied index is a recurring server and gateway bug. Ollama 0.20.2/0.20.4 was verified in https://github.com/vercel/ai/pull/14277.",
    ),
    Shape(
        "indices_not_dense",
        "observed",
        "call indices do not start at 0 or skip values",
        servers="CLIProxyAPI (Claude upstream, v7.2.116), Bedrock Access Gateway (aws-samples), Microsoft Foundry Local (before v0.8.119), LiteLLM proxy (Bedrock Claude; Responses→Chat bridge)",
        evidence=(
            'issue: https://github.com/router-for-me/CLIProxyAPI/issues/5229 — "the first tool call arrives as `index: 1`, and parallel calls arrive as `1, 2, 3`", with `"tool_calls":[{"index":1,"id":"toolu_01Pf...` quoted',
            'issue: https://github.com/aws-samples/bedrock-access-gateway/issues/134 — stream shows text deltas, then `"tool_calls":[{"index":1,"id":"tooluse_2ZNq3...`. PR https://github.com/aws-samples/bedrock-access-gateway/pull/247 shows `"index":-1` from a live deployment',
            'issue: https://github.com/microsoft/foundry-local/issues/372 — "Tool calls index is always 1 when the tool calls are streamed"',
        ),
        why='Gateways that copy a content-block or output index into `tool_calls[].index` produce indices starting at 1 (or even -1). LiteLLM shows the same: https://github.com/BerriAI/litellm/issues/11407 (Bedrock Claude, `"index":1`) and https://github.com/pipecat-ai/pipecat/issues/4987 (Responses bridge, `index=1`).',
    ),
    Shape(
        "several_deltas_of_one_call_in_a_chunk",
        "observed",
        "two entries of the same call in one chunk",
        servers="vLLM with speculative decoding (Kimi K2.x, `functions.x:0` ids)",
        evidence=(
            'issue: https://github.com/openai/openai-python/issues/3203 — "When a streaming chunk contains two `tool_calls` entries with the same `index` ... Observed in practice against vLLM with speculative decoding enabled"',
            'issue: https://github.com/openai/openai-python/pull/3245 — "Servers that use speculative decoding (e.g. vLLM with Kimi K2.6) emit a first chunk like" two `index: 0` entries (header + `" {\\""`)',
            'issue: https://github.com/openai/openai-python/issues/3201 — the first chunk quoted with `{"index":0,"id":"functions.list_files:0",...}` and `{"index":0,"function":{"arguments":" {\\""}}`',
        ),
        why="Coarse server-side batching (speculative decoding) packs several same-index entries into one chunk. No recording shows it.",
    ),
    Shape(
        "several_calls_in_one_chunk",
        "observed",
        "entries of different calls in one chunk",
        servers="Vertex AI Gemini (gemini-2.5-flash, native streamGenerateContent)",
        evidence=(
            "recording: real-recordings/gemini/vertex_parallel.sse — one SSE chunk has `parts: [{functionCall add ...}, {functionCall multiply ...}]` and `finishReason: STOP`",
        ),
        why="The Gemini native converter yields one delta per part, so one chunk holds two calls. No OpenAI-wire recording does this (every parallel batch there is one call per chunk).",
    ),
    Shape(
        "text_inside_open_call",
        "theoretical",
        "text or reasoning between two deltas of a still-open call",
        servers="none known",
        evidence=(
            'issue: https://github.com/mnfst/llm-gateway/pull/1907 — a regression test "when reasoning_content interleaves between arg chunks" (DeepSeek routes), built from a reviewer\'s repro, with no server output quoted',
            'issue: https://github.com/youssofal/MTPLX/issues/249 — MTPLX server duplicates "tool-call parameter values ... into `delta.content`" (maintainer-confirmed), but the order relative to the call\'s deltas is not shown',
        ),
        why="No capture shows text or reasoning between two deltas of one still-open call. In every recording, reasoning and text precede the call or sit in separate, closed blocks (Anthropic). The two leads are an unverified repro and a server bug whose ordering is unknown.",
    ),
    Shape(
        "content_and_tool_delta_in_one_chunk",
        "observed",
        "one chunk carries both text and a tool delta",
        servers="Poolside chat/completions API",
        evidence=(
            'issue: https://github.com/poolsideai/pool/issues/9 — Poolside maintainer (nzinov): "the issues was caused by content & tool_calls in one delta"',
            'issue: https://github.com/earendil-works/pi/issues/4228 — same engineer: "Some providers emit a final chunk that carries both the last fragment of a tool call\'s arguments and a small trailing content string"',
            'issue: https://github.com/karthink/gptel/pull/799 — counter-evidence: gptel\'s maintainer has "not seen a non-empty-string content field along with a tool-call in the same block"',
        ),
        why='Observed on one named API, on its maintainer\'s word; no raw capture is public. Recordings only show `content:""` or `null` beside tool deltas (e.g. mistral/incremental_empty_name_continuation.jsonl), which is not text.',
    ),
    Shape(
        "reasoning_and_content_in_one_chunk",
        "observed",
        "one chunk carries both reasoning and text",
        servers="vLLM (reasoning parsers, when `</think>` falls inside a delta), Z.ai GLM-5.2",
        evidence=(
            "code: vllm-project/vllm vllm/reasoning/deepseek_r1_reasoning_parser.py (commit 0172203d) — `if self.end_token_id in delta_token_ids:` … `return DeltaMessage(reasoning_content=reasoning_content, content=content if content else None)`",
            'issue: https://github.com/BerriAI/litellm/issues/27492 — comment confirming the root cause "is live in practice": "vLLM\'s reasoning parser emits a single chunk carrying **both** fields whenever `</think>` lands mid-delta"',
            'issue: https://github.com/farion1231/cc-switch/pull/6319 — "When a Chat Completions provider (e.g. GLM-5.2) sends `reasoning_content` and `content` in the same SSE delta"',
        ),
        why='Seen on boundary chunks of reasoning models. No recording here has both non-empty in one chunk: DeepSeek\'s final chunk has `content:""`, and OpenRouter\'s chunks have `content:""` next to reasoning.',
    ),
    Shape(
        "empty_chunk",
        "observed",
        "a chunk that carries nothing (role-only, usage-only, keep-alive)",
        servers="OpenAI Chat Completions, Azure OpenAI, Anthropic (ping), Groq, DeepSeek, xAI, Alibaba",
        evidence=(
            'recording: real-recordings/openai_chat/parallel_same_tool_no_usage.sse — first chunk `delta: {"role":"assistant","content":null}` only (role-only)',
            'recording: real-recordings/openai_chat/single_call.sse — usage-only chunk `"choices":[]` with `usage` before `[DONE]`',
            'recording: real-recordings/azure_openai/content_filter_first_chunk.sse — first chunk `"choices":[]` plus `prompt_filter_results`',
        ),
        why="Role-only, usage-only and filter-only chunks are routine. Anthropic also sends `ping` events (real-recordings/anthropic/tool_no_args_empty_partial_json.jsonl).",
    ),
    Shape(
        "terminal_chunk_carries_payload",
        "observed",
        "the chunk with the finish reason also carries a tool delta or text",
        servers="Mistral API (mistral-small), Vertex AI Gemini, GLM-5.3 EXL3 recipe server, vLLM / vLLM-Ascend (GLM)",
        evidence=(
            'recording: real-recordings/mistral/no_index_whole_call_with_finish.jsonl — one chunk carries the whole call, `"finish_reason":"tool_calls"` and `usage`',
            "recording: real-recordings/gemini/vertex_parallel.sse — both functionCall parts in the chunk that has `finishReason: STOP`",
            'issue: https://github.com/MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks/issues/177 — "Actual raw SSE terminal choice": `{"finish_reason":"stop","delta":{"tool_calls":[{"index":0,"function":{"arguments":"[1, 2, ...]}"}}]}}`',
        ),
        why='Payload on the finish chunk is common (see also https://github.com/vllm-project/vllm-ascend/issues/8327, GLM5: finish_reason "与最后一段数据封装在一个chunk中", packed with the last data).',
    ),
    Shape(
        "finish_stop_with_tool_calls",
        "observed",
        'finish reason "stop" on a turn that made tool calls',
        servers="Gemini native / Vertex (STOP), OpenAI Chat Completions (named tool_choice), vLLM (named tool_choice, aligned with OpenAI), Gemini OpenAI-compatible endpoint, GLM-5.3 EXL3 recipe server",
        evidence=(
            'recording: real-recordings/gemini/function_call_with_id.sse — functionCall chunk, then `{"text": ""}` with `"finishReason": "STOP"`',
            "issue: https://github.com/vllm-project/vllm/pull/25054 — table from OpenAI test calls: `(named, True) | stop` for OpenAI; vLLM changed to match it",
            'issue: https://github.com/open-webui/computer/issues/224 — Gemini\'s OpenAI-compatible stream can "finish a tool-call response with `finish_reason: "stop"` rather than `"tool_calls"`"',
        ),
        why="STOP is Gemini's normal finish for calls. On the chat wire, OpenAI itself returns `stop` for a forced named function (see also https://github.com/ENTERPILOT/GoModel/pull/124).",
    ),
    Shape(
        "no_terminal_marker",
        "observed",
        "the stream ends without any finish reason",
        servers="GLM-5.1 via NVIDIA NIM, Evolink (deepseek-v4-pro)",
        evidence=(
            'issue: https://github.com/earendil-works/pi/issues/6226 — "some providers (here: GLM 5.1 with NVIDIA NIM) that close the stream without emitting a finish_reason="tool_calls" chunk"; a maintainer calls it "an api provider (NVIDIA NIM) not behaving correctly"',
            'issue: https://github.com/openclaw/openclaw/pull/98575 — "Some OpenAI-compatible providers (e.g., Evolink deepseek-v4-pro) send valid delta.tool_calls chunks but end the stream with data: [DONE] without a final finish_reason chunk"',
        ),
        why="Both streams end normally (clean close or `[DONE]`) with tool calls and no finish reason. xAI omits the `finish_reason` key until its finish chunk but does send one (real-recordings/xai/grok4_parallel_whole_calls.sse).",
    ),
    Shape(
        "truncated_by_token_limit",
        "observed",
        "the turn ends at the provider's token limit (length, max_tokens, MAX_TOKENS)",
        servers="Anthropic Messages (max_tokens mid tool_use), OpenRouter (finish_reason length)",
        evidence=(
            'recording: real-recordings/anthropic/truncated_max_tokens_partial_json.sse — claude-3-7-sonnet: tool_use `make_file` input stops at `"\\n\\"Filing taxes"`, no `content_block_stop`, then `"stop_reason":"max_tokens"`',
            'recording: real-recordings/openrouter/midstream_error_no_tools.sse — minimax-m2 via OpenRouter: `finish_reason:"length"` (no tool call)',
        ),
        why="The Anthropic recording is a real mid-call truncation. Some servers hide truncation behind `tool_calls` instead (see arguments_truncated_normal_end).",
    ),
    Shape(
        "provider_error_mid_stream",
        "observed",
        "an in-band error event after HTTP 200",
        servers="Groq, OpenRouter, Anthropic Messages (`overloaded_error` event)",
        evidence=(
            'recording: real-recordings/groq/tool_use_failed_error_event.sse — gpt-oss-120b: reasoning deltas, then `event: error` with `"code": "tool_use_failed"` after HTTP 200, with no `[DONE]`',
            'recording: real-recordings/groq/content_then_error_event.sse — content `maybe` streamed, then `event: error` ("Tool choice is required, but model did not call a tool")',
            'recording: real-recordings/openrouter/midstream_error_no_tools.sse — a normal chunk with top-level `"error": {"code": 400, "message": "Token limit reached"}`, then `[DONE]`',
            "issue: https://github.com/anthropics/anthropic-sdk-python/issues/1258 — an `overloaded_error` arriving mid-stream as an SSE `error` event of an HTTP 200 response (the SDK raised it with status 200)",
        ),
        why="Both in-band forms (an SSE `error` event and an error object inside a data chunk) appear in real captures. Anthropic sends `event: error` inside a 200 stream under load.",
    ),
    Shape(
        "stream_cut",
        "observed",
        "the body ends without its terminal event (no `[DONE]`, `message_stop` or `response.completed`): the connection closed cleanly",
        servers="an unnamed key proxy (DeepSeek upstream: an upstream reset reached the client as a clean end of body)",
        evidence=(
            'issue: https://github.com/tetsuo-ai/agenc-core/pull/2492 — "DeepSeek reset two long reasoning streams mid-flight" (`read ECONNRESET`); the client received "a normal end of body, with no finish_reason, no `[DONE]` and no usage"',
            'issue: https://github.com/anthropics/anthropic-sdk-python/issues/1470 — claude-opus-4-6: "Stream died mid-`text_editor_code_execution.input_json_delta` — the `partial_json` cut off cleanly at `{"command": "create"`"; `peer closed connection without sending complete message body`',
        ),
        why="Two different events. A connection dropped mid-body makes httpx raise (`peer closed connection without sending complete message body`, the Anthropic report), which the SDKs surface as a connection error: nothing to read. A body that ends cleanly before its terminal event (the DeepSeek report, through a proxy) reaches the reader as a normal end; that is what the bundled `stream_cut_*` recordings model, and only the missing terminal event (no stop reason) tells it apart.",
    ),
    Shape(
        "arguments_invalid_json",
        "observed",
        "the argument text is not valid JSON although the stream ended normally",
        servers="Anthropic Messages (fine-grained / eager tool input streaming), OpenVINO Model Server (Hermes 3 parser)",
        evidence=(
            'issue: https://github.com/leohenon/pi-anthropic-oauth/issues/11 — fine-grained tool streaming: "the accumulated `input_json` can be transiently invalid (a complete object followed by trailing bytes)": "Unexpected non-whitespace character after JSON at position 91"',
            'issue: https://github.com/openclaw/openclaw/pull/141323 — "a Claude tool call finishes streaming with a string value that contains a raw control character ... or an invalid escape (for example `\\d`)"',
            'issue: https://github.com/openvinotoolkit/model_server/issues/3838 — "Invalid JSON produced in streamed tool_call arguments when using Hermes 3 parser", with OVMS trace logs',
        ),
        why="Anthropic documents that fine-grained streaming does not validate tool input, and users hit it. Local servers' parsers also emit malformed JSON.",
    ),
    Shape(
        "arguments_truncated_normal_end",
        "observed",
        "argument text cut short although the stream ended normally",
        servers="vLLM (finish_reason relabelled `tool_calls` at max_tokens), OpenRouter",
        evidence=(
            'issue: https://github.com/vllm-project/vllm/pull/47963 — comment: "three tool calls reached exactly max_tokens=8192 and returned unterminated JSON arguments with finish_reason="tool_calls". HTTP/SSE completed normally"',
            'issue: https://github.com/MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark/issues/55 — vLLM DSpark recipe: `completion_tokens` equals `max_tokens` with `finish_reason: "tool_calls"`, and streamed calls have "unterminated JSON"',
            'issue: https://github.com/earendil-works/pi/issues/8501 — "OpenRouter streamed a `write` tool call whose arguments ended mid-JSON, then returned `finish_reason: "tool_calls"`"',
        ),
        why="vLLM's serving code lets `auto_tools_called` override `length` (https://github.com/vllm-project/vllm/issues/58228), so truncated calls end with a normal-looking finish.",
    ),
    Shape(
        "arguments_not_an_object",
        "theoretical",
        "valid JSON that is not an object (a list, string, number, boolean) as the arguments",
        servers="none known",
        evidence=(
            'issue: https://github.com/ComposioHQ/composio/pull/3429 — "Models occasionally emit tool-call arguments as a JSON string instead of an object", with no server or raw stream named',
            'issue: https://github.com/vaadin/flow-components/pull/10008 — adds handling for `""` and a JSON-array argument, but only in client tests',
        ),
        why='No named server was shown streaming a list, string, number or boolean as a call\'s complete arguments. The Venice chunks `"arguments":"2"` (https://github.com/ar-jan/llm-venice/issues/45) are fragments of a string, not a non-object result.',
    ),
    Shape(
        "arguments_null",
        "theoretical",
        "the literal null as the argument text",
        servers="none known",
        evidence=(),
        why="Servers that send `arguments: null` (a JSON null, not the text `null`), or no arguments at all, do so for a call without arguments: that is `arguments_empty` once read. Argument text that is the four characters `null` was not seen.",
    ),
    Shape(
        "arguments_two_objects",
        "observed",
        "two JSON objects in one call's argument text",
        servers="vLLM (xlam tool parser); an upstream relay serving gemini-3.1-pro (not named)",
        evidence=(
            'issue: https://github.com/vllm-project/vllm/issues/51697 — `--tool-call-parser xlam`: client receives `{"city": "Seattle", ...}{"city": "Seattle", ...}`. The repro is CPU-only and parser-level, on vLLM main',
            'issue: https://github.com/dyedd/lens/issues/49 — captured raw SSE: a second complete argument object on `"index":0` with no new id, giving `{"pattern":"**/*"}{"path":"content/..."}` (upstream channel not named)',
            'issue: https://github.com/NousResearch/hermes-agent/issues/25333 — gemini-3-flash-preview log: arguments `{"entity": ...}{"enti...`',
        ),
        why="The vLLM code path is concrete and checkable. The Gemini reports may come partly from client-side merging of indexless calls (see hermes-agent#72488), so they are weaker evidence.",
    ),
    Shape(
        "arguments_empty",
        "observed",
        '"" as the arguments of a no-argument call',
        servers="Anthropic Messages, Cohere v2, Gemini native (no `args` field), vLLM (`arguments: null` for parameterless calls), Venice (arguments omitted)",
        evidence=(
            'recording: real-recordings/gemini/partial_args_no_args_then_parallel.jsonl — `{"functionCall":{"name":"read_theme"}, ...}`: no `args` field at all',
            'issue: https://github.com/pipecat-ai/pipecat/pull/4060 — "When an LLM returns a streaming tool call with no arguments (`arguments=null` in the delta chunks)", "Verified with vLLM serving `Qwen3-VL-235B`"',
            'issue: https://github.com/ar-jan/llm-venice/pull/41 — Venice: "in streaming mode the tool call\'s `arguments` field is omitted for function calls without arguments"',
            'recording: real-recordings/anthropic/tool_no_args_empty_partial_json.jsonl — claude-sonnet-4.5: tool_use `updateIssueList` with a single `input_json_delta` `"partial_json":""`, then `content_block_stop`',
            'recording: real-recordings/cohere/empty_tool_call.jsonl — `tool-call-start` with `"arguments":""` followed directly by `tool-call-end`',
        ),
        why='Anthropic and Cohere send `""` for a no-argument tool; Gemini, vLLM and Venice send no argument text at all (no `args`, `arguments: null` or no `arguments`), which reads the same. OpenAI and Groq send `"{}"` instead (groq/llama_empty_args_whole_call.jsonl).',
    ),
    Shape(
        "reserved_argument_keys",
        "observed",
        "argument keys frameworks reserve (self, type, id, name, kwargs, settings)",
        servers="every server, for a tool whose own schema declares such a parameter",
        evidence=(
            'issue: https://github.com/tya5/reyn/issues/3041 — live-verified: "any tool whose own schema declares a parameter literally named `name` cannot be called". The provider is not named',
            'issue: https://github.com/openlit/openlit/pull/1570 — a real MCP tool call `repo_file(version="refs/heads/main")` collided with a wrapper\'s `version` parameter. The provider is not named',
            "recording: real-recordings/openai_responses/long_nested_args_166_deltas.sse — gpt-4o sends `id` and `name` keys, but nested under `recipe`, not at top level",
        ),
        why="Servers emit whatever keys the tool's schema declares, so this shape comes from the schema, not from a server quirk: users hit it with real tools on live providers (reyn#3041 was live-verified). Judged observed on that ground (a review decision: no capture ties a top-level reserved key to one named server).",
    ),
    Shape(
        "no_index",
        "observed",
        'Chat Completions tool-call entries without an "index" key',
        servers="Mistral API, Gemini OpenAI-compatible endpoint, Ollama OpenAI-compatible API (before 0.4.7), mistral.rs server",
        evidence=(
            'recording: real-recordings/mistral/no_index_whole_call_with_finish.jsonl — `"tool_calls":[{"id":"gSIMJiOkT","function":{"name":"weather",...}}]` with no `index` and no `type`',
            'issue: https://github.com/noho/dayu-agent/issues/45 — capture from `/v1beta/openai`: "tool call delta 不发 `index` 字段" (no index field), with the delta quoted. The same is captured in https://github.com/FerroxLabs/wayland-core/pull/316 ("captured from the live endpoint")',
            'issue: https://github.com/ollama/ollama/issues/7881 — "The streamed chat-completion response from ollama\'s openai-compatible API does not populate the `.choices[].delta.tool_calls[].index` field"',
        ),
        why="Several real servers omit the key entirely.",
    ),
    Shape(
        "null_index",
        "theoretical",
        'Chat Completions tool-call entries with "index": null',
        servers="none known",
        evidence=(
            'issue: https://github.com/chatanywhere/GPT_API_free/issues/254 — titled "index 为 null" (index is null), but the quoted JSON shows the key omitted (`// no index`)',
            'issue: https://github.com/EricLBuehler/mistral.rs/pull/1507 — mistral.rs deltas "do not include the mandatory index field" (omitted, not `null`)',
        ),
        why='Every report found is an omitted key that SDKs surface as `None`. No raw capture shows `"index": null` on the wire.',
    ),
    Shape(
        "entry_without_function",
        "theoretical",
        'a tool_calls entry with no "function" object (an id-only continuation)',
        servers="none known",
        evidence=(
            'issue: https://github.com/open-webui/computer/issues/224 — says Gemini can return `extra_content.google.thought_signature` "including as a standalone metadata-only delta", but only shows "A minimal representative stream"',
            "issue: https://github.com/noho/dayu-agent/issues/45 — the real Gemini OpenAI-compatible capture has `extra_content` on the same entry as `function`",
        ),
        why="No capture shows a `tool_calls` entry without a `function` object from a named server. The Gemini claim is a lead to verify with a real recording.",
    ),
    Shape(
        "null_content_first_chunk",
        "observed",
        'the first chunk\'s delta has "content": null, not ""',
        servers="OpenAI Chat Completions, Azure OpenAI, DeepSeek, Groq, Alibaba DashScope, vLLM-Ascend",
        evidence=(
            'recording: real-recordings/openai_chat/single_call.sse — first chunk `"delta":{"role":"assistant","content":null,"tool_calls":[...],"refusal":null}`',
            'recording: real-recordings/azure_openai/content_filter_first_chunk.sse — first choice chunk `"content":null` with role and tool call',
            'recording: real-recordings/deepseek/single_call_11_chunks.jsonl — `{"role":"assistant","content":null,"reasoning_content":""}`',
        ),
        why='`content: null` is the OpenAI norm. Mistral and Groq (gpt-oss) send `content:""` instead.',
    ),
    Shape(
        "index_always_zero",
        "observed",
        "every parallel call on index 0, each with its own id",
        servers="Ollama OpenAI-compatible API (0.20.x), Plexus gateway (Responses→Chat)",
        evidence=(
            'issue: https://github.com/ollama/ollama/issues/15457 — "all tool call chunks have `index: 0` instead of incrementing indices (0, 1, 2...)"',
            'issue: https://github.com/vercel/ai/pull/14277 — "Verified with: Ollama 0.20.2/0.20.4, models: qwen3-coder:30b, gemma4:e4b, qwen2.5-coder:7b"',
            'issue: https://github.com/mcowger/plexus/issues/691 — "translated Chat Completions tool-call chunks use `index: 0` for every call"',
        ),
        why="Each parallel call carries its own id on index 0.",
    ),
    Shape(
        "cumulative_arguments",
        "theoretical",
        "each arguments fragment repeats everything sent so far",
        servers="none known",
        evidence=(
            'issue: https://github.com/NousResearch/hermes-agent/pull/35718 — client maintainer: "Some OpenAI-compatible providers (DeepSeek / Baidu Qianfan) resend the **full arguments-so-far in every stream chunk**", but no capture is shown',
            "issue: https://github.com/NousResearch/hermes-agent/issues/35592 — the linked report (deepseek-v4-pro via a custom provider) shows only corrupted, repeated parameters, not raw chunks",
            'issue: https://github.com/icoretech/codex-pooler/pull/193 — "The ChatGPT Web backend can stream accumulated argument values", but the maintainer verified only a different repetition (`output_item.done` repeating the payload)',
        ),
        why="Providers are named, but nobody shows a raw stream of growing snapshots. The DeepSeek recording (deepseek/single_call_11_chunks.jsonl) is incremental. Tag observed only once a capture exists.",
    ),
    Shape(
        "object_arguments",
        "theoretical",
        '"arguments" is a JSON object, not a string',
        servers="none known",
        evidence=(
            'issue: https://github.com/unslothai/unsloth/pull/10275 — reviewer checked llama.cpp: #20198 (object arguments) "sits on the message path", whereas "the streaming delta path ... assigns `function["arguments"] = diff.tool_call_delta.arguments`, a `std::string`"',
            'issue: https://github.com/ggml-org/llama.cpp/pull/20202 — llama.cpp maintainer: "the behavior of the API has been changed to output tool call arguments as JSON objects"; the PR proposes returning strings by default again. Nothing shows object arguments on the streaming delta path',
        ),
        why="Object arguments occur on native wires (Ollama `/api/chat`, Gemini `args`), which converters handle. No named server streams an object-valued `arguments` on the OpenAI Chat wire.",
    ),
    Shape(
        "tool_delta_with_finish",
        "observed",
        "the last tool delta and finish_reason in one chunk",
        servers="Mistral API, vLLM / vLLM-Ascend (GLM parsers), GLM-5.3 EXL3 recipe server",
        evidence=(
            'recording: real-recordings/mistral/no_index_whole_call_with_finish.jsonl — `"tool_calls":[...]` and `"finish_reason":"tool_calls"` in the same choice',
            'issue: https://github.com/vllm-project/vllm/issues/44098 — "GLM tool-call streaming final chunks ... combine arguments with finish_reason" (vLLM main)',
            'issue: https://github.com/MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks/issues/177 — raw terminal choice `{"finish_reason":"stop","delta":{"tool_calls":[...]}}`',
        ),
        why="Common on servers that flush the parser's last output with the stop signal.",
    ),
    Shape(
        "azure_empty_first_chunk",
        "observed",
        'a first chunk with "choices": [] and prompt_filter_results',
        servers="Azure OpenAI",
        evidence=(
            'recording: real-recordings/azure_openai/content_filter_first_chunk.sse — first data line `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[...]}`',
        ),
        why="Seen in a real Azure (gpt-5-mini) capture.",
    ),
    Shape(
        "message_and_delta",
        "observed",
        'choices carry both "delta" and a "message" snapshot',
        servers="Writer (palmyra-x4, api.writer.com)",
        evidence=(
            "recording: real-recordings/writer/seven_parallel_calls_message_and_delta.sse — every choice has keys `index, finish_reason, message, delta, logprobs, trace_details`",
        ),
        why="Seen in a real Writer capture.",
    ),
    Shape(
        "continuous_usage_stats",
        "observed",
        "usage on every chunk",
        servers="vLLM (opt-in `stream_options.continuous_usage_stats`), SGLang (opt-in), Baseten (schema default true)",
        evidence=(
            'issue: https://github.com/vllm-project/vllm/pull/34887 — quoted vLLM stream: the tool-call chunk carries `"usage": { "prompt_tokens": 94, "total_tokens": 101, "completion_tokens": 7 }`, as does the role chunk',
            "code: sgl-project/sglang python/sglang/srt/entrypoints/openai/serving_chat.py (commit 002897c2) — `_process_tool_call_stream`: `if continuous_usage_stats: ... chunk.usage = UsageProcessor.calculate_token_usage(...)` on every tool-call chunk",
            'docs: https://raw.githubusercontent.com/api-evangelist/baseten/refs/heads/main/json-schema/baseten-streamoptions-schema.json — `"continuous_usage_stats": { "default": true, ... "includes running token usage statistics in each streaming chunk." }`',
        ),
        why="Opt-in on vLLM and SGLang, and default-on per the Baseten schema. OpenAI sends `usage:null` on every chunk and usage only in the final `choices:[]` chunk. Gemini native sends `usageMetadata` on every chunk (real-recordings/gemini/parallel_same_tool.sse).",
    ),
    Shape(
        "whole_call_per_chunk",
        "observed",
        "each call complete in one chunk, on the wire",
        servers="xAI, Groq, Mistral API, Gemini OpenAI-compatible endpoint",
        evidence=(
            "recording: real-recordings/xai/grok4_parallel_whole_calls.sse — two chunks, each one complete call (id, name, arguments)",
            'recording: real-recordings/groq/llama_empty_args_whole_call.jsonl — single tool chunk `{"id":"tk85n1k4m","type":"function","function":{"name":"weather","arguments":"{}"},"index":0}`',
            "issue: https://github.com/noho/dayu-agent/issues/45 — Gemini `/v1beta/openai` capture: whole call per delta",
        ),
        why="Same as whole_call_in_one_delta, on the wire. Note that OpenRouter's Gemini route sends the header first and then the whole arguments in one fragment (openrouter/gemini_parallel.sse), which is not one chunk.",
    ),
    Shape(
        "sse_comments",
        "observed",
        "SSE comment lines between events",
        servers="OpenRouter",
        evidence=(
            "recording: real-recordings/openrouter/gemini_parallel.sse — three `: OPENROUTER PROCESSING` comment events before the first `data:` event",
            "recording: real-recordings/openrouter/midstream_error_no_tools.sse — 17 `: OPENROUTER PROCESSING` comments before the first data event",
        ),
        why="Observed only before the first data event in these recordings. Comments or keep-alives between data events are plausible but were not seen here.",
    ),
)

SHAPES: dict[str, Shape] = {shape.id: shape for shape in _SHAPES}
OBSERVED: frozenset[str] = frozenset(shape.id for shape in _SHAPES if shape.level == "observed")

# OpenAI's own Chat Completions stream (four api.openai.com recordings): one tool entry per chunk,
# id, type and the whole name only on a call's first delta, dense indices from 0, calls one after
# the other; a forced named tool_choice ends with "stop" (vllm-project/vllm#25054).
OPENAI_OWN_STREAM: frozenset[str] = frozenset(
    {"arguments_fragmented", "empty_chunk", "null_content_first_chunk", "finish_stop_with_tool_calls"}
)


# Every server a shape's ``servers`` names, under one name, with the wire API its stream is in
# ("*": any API; the shape is a property of the tool's schema, not of a server). A test holds
# every name in ``servers`` to this table, so a new server is placed here in review.
SERVER_APIS: Mapping[str, str] = {
    "OpenAI Chat Completions": "openai-chat",
    "OpenAI Responses": "openai-responses",
    "Azure OpenAI": "openai-chat",
    "Anthropic Messages": "anthropic",
    "Gemini native": "gemini",
    "Vertex AI Gemini": "gemini",
    "Bedrock ConverseStream": "bedrock-converse",
    "Cohere v2": "cohere-v2",
    "Alibaba DashScope": "openai-chat",
    "Atlas inference server": "openai-chat",
    "Baseten": "openai-chat",
    "Bedrock Access Gateway": "openai-chat",
    "CLIProxyAPI": "openai-chat",
    "DeepSeek": "openai-chat",
    "Evolink": "openai-chat",
    "GLM-5.3 EXL3 recipe server": "openai-chat",
    "Gemini OpenAI-compatible endpoint": "openai-chat",
    "Groq": "openai-chat",
    "LiteLLM proxy": "openai-chat",
    "Microsoft Foundry Local": "openai-chat",
    "Mistral API": "openai-chat",
    "MiniMax M2.7 via NVIDIA NIM": "openai-chat",
    "GLM-5.1 via NVIDIA NIM": "openai-chat",
    "Ollama OpenAI-compatible API": "openai-chat",
    "OpenRouter": "openai-chat",
    "OpenVINO Model Server": "openai-chat",
    "Plexus gateway": "openai-chat",
    "Poolside": "openai-chat",
    "SGLang": "openai-chat",
    "Venice": "openai-chat",
    "Writer": "openai-chat",
    "Z.ai GLM-5.2": "openai-chat",
    "an unnamed relay (gemini-3.1-pro)": "openai-chat",
    "an unnamed key proxy": "openai-chat",
    "llama.cpp server": "openai-chat",
    "mistral.rs server": "openai-chat",
    "mlx-openai-server": "openai-chat",
    "opencode (behind deepseek-acp)": "openai-chat",
    "vLLM": "openai-chat",
    "vLLM-Ascend": "openai-chat",
    "vLLM with speculative decoding": "openai-chat",
    "xAI": "openai-chat",
    "xLLM": "openai-chat",
    "every server": "*",
}
# How ``servers`` texts name a server of SERVER_APIS otherwise (parenthesised details are dropped first).
_SERVER_ALIASES: Mapping[str, str] = {
    "Alibaba": "Alibaba DashScope",
    "Anthropic": "Anthropic Messages",
    "Anthropic Messages API": "Anthropic Messages",
    "Vertex": "Vertex AI Gemini",
    "Vertex AI": "Vertex AI Gemini",
    "Poolside chat/completions API": "Poolside",
    "an upstream relay serving gemini-3.1-pro": "an unnamed relay (gemini-3.1-pro)",
    "the opencode chat/completions upstream behind deepseek-acp": "opencode (behind deepseek-acp)",
    "vLLM glm47 parser": "vLLM",
    "vLLM-Ascend GLM parser": "vLLM-Ascend",
}
_NOT_A_SERVER = ("none known", "for a tool whose own schema declares such a parameter")


def server_names(servers: str) -> tuple[str, ...]:
    """The servers a ``Shape.servers`` text names, as SERVER_APIS names them (``KeyError`` for one it
    does not list): split at top-level commas, semicolons and " / ", parenthesised details dropped."""
    parts, depth, current = [], 0, ""
    for char in servers:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ",;":
            parts.append(current)
            current = ""
        elif depth == 0 and char not in "()":
            current += char
    parts.append(current)
    names: list[str] = []
    for part in parts:
        for piece in part.split(" / "):
            name = " ".join(piece.split())
            if not name or name in _NOT_A_SERVER:
                continue
            name = _SERVER_ALIASES.get(name, name)
            if name not in SERVER_APIS:
                raise KeyError(f"server {name!r} is not in conformance.wire.shapes.SERVER_APIS")
            if name not in names:
                names.append(name)
    return tuple(names)


def _senders(shape: str, api: str | None) -> tuple[str, ...]:
    """The servers seen sending ``shape`` (in ``api``, when given)."""
    names = server_names(SHAPES[shape].servers) if observed(shape) else ()
    return tuple(name for name in names if api is None or SERVER_APIS[name] in (api, "*"))


def observed(shape: str) -> bool:
    """Whether a named server has been seen sending ``shape`` (``KeyError`` for an unknown shape)."""
    return SHAPES[shape].level == "observed"


def realism_of(shapes: Iterable[str], api: str | None = None) -> Realism:
    """The realism of an input with these shapes: observed only if every one of them is.

    ``api`` is the wire API the input was read in (None: a provider-agnostic chunk stream). The
    evidence names, per shape, the first server of that API seen sending it, else the first server
    of any API, saying so; ``together`` the servers seen sending every one of them (of that API,
    where one was seen), each shape perhaps in another stream or configuration of that server.
    A shape seen only on another API stays observed: the lists say who was seen sending a shape,
    not who was seen never sending it.
    """
    found = tuple(sorted(set(shapes)))
    unknown = [shape for shape in found if shape not in SHAPES]
    if unknown:
        raise KeyError(f"unknown shapes {unknown}; the reviewed list is conformance.wire.shapes.SHAPES")
    theoretical = tuple(shape for shape in found if not observed(shape))
    senders = {shape: _senders(shape, api) for shape in found if observed(shape)}
    evidence = tuple(
        f"{shape} ({names[0]})" if names else f"{shape} ({_senders(shape, None)[0]}; no {api} server seen)"
        for shape, names in senders.items()
    )
    together: tuple[str, ...] = ()
    if found and not theoretical:
        # Per shape, its senders in the input's API, else (seen only elsewhere) in any API.
        named = [set(names or _senders(shape, None)) for shape, names in senders.items()]
        named = [names for names in named if "every server" not in names]
        order = [name for shape in senders for name in senders[shape] or _senders(shape, None)]
        common = set.intersection(*named) if named else {"every server"}
        together = tuple(sorted(common, key=order.index))
    return Realism(found, theoretical, evidence, together=together, api=api or "")
