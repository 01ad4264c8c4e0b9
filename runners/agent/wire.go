package agent

import (
	"encoding/json"
	"strings"

	"github.com/rowcall/rowcall/internal/redact"
)

// The OpenAI chat completions wire format, the parts this runner sends and
// reads (https://platform.openai.com/docs/api-reference/chat).

// chatRequest is the body of POST {base}/chat/completions.
type chatRequest struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
	Tools    []tool    `json:"tools,omitempty"`
	Stream   bool      `json:"stream"` // always false: the runner reads one JSON answer
}

// message is one chat message. Content is nil only on an assistant message
// that carries tool calls and no text.
type message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

func text(role, s string) message { return message{Role: role, Content: &s} }

type tool struct {
	Type     string       `json:"type"` // "function"
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type toolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"` // "function"
	Function toolCallFunction `json:"function"`
}

type toolCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON object, as text
}

// completion is a non-streaming answer.
type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
	Error   *apiErr  `json:"error"` // some gateways answer 200 with an error object
}

type choice struct {
	Index        int    `json:"index"`
	Message      answer `json:"message"`
	FinishReason string `json:"finish_reason"`
}

type answer struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []toolCall `json:"tool_calls"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// errorBody is OpenAI's error answer: {"error":{"message","type","param","code"}}.
type errorBody struct {
	Error *apiErr `json:"error"`
}

type apiErr struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"` // a string, a number or null depending on the provider
}

// errorMessage is the provider's own message for a failed answer: the
// error.message of an OpenAI error body, else the body itself, else the
// status text; shown (redacted, on one line, cut to maxErrorText bytes).
func errorMessage(body []byte, status string, secrets []string) string {
	var e errorBody
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return shown(e.Error.Message, maxErrorText, secrets)
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return shown(s, maxErrorText, secrets)
	}
	return status
}

const maxErrorText = 500

// shown is text from the provider or a model as a result shows it: secrets
// redacted, on one line, cut to at most n bytes. It redacts before oneLine
// (which rewrites whitespace a secret may contain) and redact.Clip again
// after, before it cuts, so no cut leaves a piece of a secret.
func shown(s string, n int, secrets []string) string {
	return redact.Clip(oneLine(redact.String(s, secrets)), n, secrets)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
