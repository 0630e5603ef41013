// Package llm hands a mcpkit.Registry's tools to a language model API and
// the model's tool calls back to the tools.
//
// The tool definitions come in four formats: OpenAI Chat Completions
// function tools (OpenAITools), the OpenAI Responses API (OpenAIResponsesTools),
// Anthropic Messages tools (AnthropicTools) and Gemini function declarations
// (GeminiTools). The OpenAI and Anthropic results are the official Go SDKs'
// own parameter types (github.com/openai/openai-go/v3 and
// github.com/anthropics/anthropic-sdk-go/v2): a host passes them straight
// into its request, and the field names, the union wrappers and the
// constant "type" members come from the SDKs that define the wire format,
// so they cannot drift from it. Google's google.golang.org/genai is not
// used (it is not available to this module's build); GeminiTool and its
// parts are small types with the JSON shape that API documents.
//
// # Schemas
//
// Each format takes a different part of JSON Schema, so each tool's input
// schema is normalized for the format, and normalization never fails and
// never drops a tool:
//
//   - local $refs (#/$defs/…, any JSON pointer) are inlined for every
//     format; a recursive reference is cut where it recurs (the value is
//     left undescribed), and remote or unresolvable ones are removed;
//   - the root is one object schema: a top-level allOf, anyOf or oneOf is
//     merged into it, and a root that is not an object becomes an empty
//     object schema;
//   - Gemini gets its OpenAPI subset: type lists become "nullable" (and
//     anyOf for several types), only string enums stay, no $ref, no
//     additionalProperties, allOf merged, oneOf turned into anyOf; a
//     nested object without properties (which Gemini refuses) is left
//     out, an array without items becomes an array of strings, and a
//     function name Gemini refuses is declared as GeminiName makes it,
//     GeminiTool.Names mapping it back for Caller.Names;
//   - OpenAI strict mode (Options.Strict) lists every property as required
//     and makes the optional ones nullable, sets additionalProperties to
//     false on every object and removes what strict mode does not take.
//
// What was changed or lost is returned as Notes, one per change with the
// tool and the JSON pointer, for the host to log.
//
// # Calls and results
//
// Caller.Call runs a model's ToolCall through Registry.Call — a local
// tool, or a server's tool through the client that serves it — and returns
// a Result, never a Go error: arguments that are not JSON or do not match
// the schema, an unknown tool, the tool's isError, a timeout and a server
// that is not connected all come back as a Result with IsError and a text
// the model can read. The Result becomes an OpenAI tool message
// (OpenAIMessage, text only: images are named), a Responses
// function_call_output with input_text and input_image items
// (OpenAIResponsesItem),
// an Anthropic tool_result block with text and image blocks
// (AnthropicBlock) or a Gemini functionResponse part (GeminiPart). Text
// and images share a byte budget (Caller.MaxBytes); what does not fit is
// cut with a "[truncated: …]" marker. Resource links, embedded resources
// and audio become text; structuredContent becomes JSON text when the
// tool sent no text, and Gemini also gets it as an object.
package llm
