// The suite tests logging and sampling, which MCP 2026-07-28 deprecates
// (SEP-2577) but still serves: the fixture uses the SDK's deprecated API.
//lint:file-ignore SA1019 the conformance scenarios test deprecated features

// Package mcpconformance is the server that the official MCP conformance
// suite (@modelcontextprotocol/conformance) tests, written with the
// official Go SDK: the suite's npm package does not ship the fixture its
// server scenarios call. The tools, resources and prompts, their names and
// what they answer follow the suite's own TypeScript fixture
// (examples/servers/typescript/everything-server.ts of the suite's
// repository, at the pinned version).
package mcpconformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The base64 payloads the suite's fixture answers: a 1x1 red PNG and a
// minimal WAV file.
const (
	ImageBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	AudioBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// New returns the fixture server.
func New() *mcp.Server {
	f := &fixture{subscribed: map[string]bool{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcp-conformance-test-server", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}, Total: 0}}, nil
		},
		SubscribeHandler:   f.subscribe,
		UnsubscribeHandler: f.unsubscribe,
	})
	// The suite's fixture sends log messages without waiting for
	// logging/setLevel; the SDK sends none until a level is set, so each
	// session starts at "debug".
	s.AddReceivingMiddleware(logFromTheStart)
	addTools(s)
	addResources(s)
	addPrompts(s)
	return s
}

// Handler serves the fixture over streamable HTTP with sessions and an
// event store (the suite's SSE scenarios resume streams).
func Handler() http.Handler {
	s := New()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
}

type fixture struct {
	mu         sync.Mutex
	subscribed map[string]bool
}

func (f *fixture) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subscribed[req.Params.URI] = true
	return nil
}

func (f *fixture) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subscribed, req.Params.URI)
	return nil
}

func logFromTheStart(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "notifications/initialized" && err == nil {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				_, _ = next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{Session: ss, Params: &mcp.SetLoggingLevelParams{Level: "debug"}})
			}
		}
		return res, err
	}
}

// none is the input schema of a tool without arguments.
var none = json.RawMessage(`{"type":"object","properties":{}}`)

// text is a result of one text content, s.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// decode is the bytes of the base64 text s, which must be valid.
func decode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// addTools adds the tools the conformance suite's server scenarios call.
func addTools(s *mcp.Server) {
	tool := func(name, description string, schema json.RawMessage, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: schema}, h)
	}
	addContentTools(tool)
	tool("test_tool_with_logging", "Tests tool that emits log messages during execution", none, toolWithLogging)
	tool("test_tool_with_progress", "Tests tool that reports progress notifications", none, toolWithProgress)
	tool("test_error_handling", "Tests error response handling", none,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
				&mcp.TextContent{Text: "This tool intentionally returns an error for testing"}}}, nil
		})
	tool("test_reconnection", "Tests SSE stream disconnection and client reconnection (SEP-1699).", none,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
		})
	addAskingTools(tool)
	tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
		json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",`+
			`"$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},`+
			`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`),
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("JSON Schema 2020-12 tool called with: " + string(req.Params.Arguments)), nil
		})
}

// addContentTools adds the tools that answer one kind of content each
// (text, image, audio, an embedded resource), and one that answers them
// mixed.
func addContentTools(tool func(string, string, json.RawMessage, mcp.ToolHandler)) {
	tool("test_simple_text", "Tests simple text content response", none,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("This is a simple text response for testing."), nil
		})
	tool("test_image_content", "Tests image content response", none,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: decode(ImageBase64), MIMEType: "image/png"}}}, nil
		})
	tool("test_audio_content", "Tests audio content response", none,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: decode(AudioBase64), MIMEType: "audio/wav"}}}, nil
		})
	tool("test_embedded_resource", "Tests embedded resource content response", none,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}}, nil
		})
	tool("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", none,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Multiple content types test:"},
				&mcp.ImageContent{Data: decode(ImageBase64), MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource",
					MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
			}}, nil
		})
}

// toolWithLogging is test_tool_with_logging: it logs three messages to
// the client while it runs.
func toolWithLogging(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: m}); err != nil {
			return nil, err
		}
	}
	return text("Tool with logging executed successfully"), nil
}

// toolWithProgress is test_tool_with_progress: it reports progress 0, 50
// and 100 of 100 on the caller's progress token (0 without one) and
// answers the token.
func toolWithProgress(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	token := req.Params.GetProgressToken()
	if token == nil {
		token = 0
	}
	for _, p := range []float64{0, 50, 100} {
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100,
			Message: fmt.Sprintf("Completed step %v of 100", p)}); err != nil {
			return nil, err
		}
	}
	return text(fmt.Sprint(token)), nil
}

// addAskingTools adds the tools that ask the client: sampling and the
// three elicitations.
func addAskingTools(tool func(string, string, json.RawMessage, mcp.ToolHandler)) {
	tool("test_sampling", "Tests server-initiated sampling (LLM completion request)",
		json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Prompt string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}}})
			if err != nil {
				return text("Sampling not supported or error: " + err.Error()), nil
			}
			answer := "No response"
			if t, ok := res.Content.(*mcp.TextContent); ok {
				answer = t.Text
			}
			return text("LLM response: " + answer), nil
		})
	elicit := func(name, description, message string, schema string) {
		tool(name, description, json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`),
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct{ Message string }
				_ = json.Unmarshal(req.Params.Arguments, &in)
				if in.Message == "" {
					in.Message = message
				}
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: in.Message, RequestedSchema: json.RawMessage(schema)})
				if err != nil {
					return text("Elicitation not supported or error: " + err.Error()), nil
				}
				content, _ := json.Marshal(res.Content)
				if res.Content == nil {
					content = []byte("{}")
				}
				return text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, content)), nil
			})
	}
	elicit("test_elicitation", "Tests server-initiated elicitation (user input request)", "",
		`{"type":"object","properties":{"response":{"type":"string","description":"User's response"}},"required":["response"]}`)
	elicit("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034",
		"Please review and update the form fields with defaults", sep1034Schema)
	elicit("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330",
		"Please select options from the enum fields", sep1330Schema)
}

const sep1034Schema = `{"type":"object","required":[],"properties":{
"name":{"type":"string","description":"User name","default":"John Doe"},
"age":{"type":"integer","description":"User age","default":30},
"score":{"type":"number","description":"User score","default":95.5},
"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
"verified":{"type":"boolean","description":"Verification status","default":true}}}`

const sep1330Schema = `{"type":"object","required":[],"properties":{
"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},
"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`

func addResources(s *mcp.Server) {
	static := func(name, uri, title, description, mime string, contents *mcp.ResourceContents) {
		s.AddResource(&mcp.Resource{Name: name, URI: uri, Title: title, Description: description, MIMEType: mime},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{contents}}, nil
			})
	}
	static("static-text", "test://static-text", "Static Text Resource", "A static text resource for testing", "text/plain",
		&mcp.ResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."})
	static("static-binary", "test://static-binary", "Static Binary Resource", "A static binary resource (image) for testing", "image/png",
		&mcp.ResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: decode(ImageBase64)})
	static("watched-resource", "test://watched-resource", "Watched Resource", "A resource that auto-updates every 3 seconds", "text/plain",
		&mcp.ResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content"})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "template", URITemplate: "test://template/{id}/data", Title: "Resource Template",
		Description: "A resource template with parameter substitution", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			uri := req.Params.URI
			id, okPrefix := strings.CutPrefix(uri, "test://template/")
			id, okSuffix := strings.CutSuffix(id, "/data")
			if !okPrefix || !okSuffix || id == "" {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
		})
}

func addPrompts(s *mcp.Server) {
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{
				Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
		Description: "A prompt that includes an embedded resource",
		Arguments:   []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			if uri == "" {
				return nil, errors.New("resourceUri is required")
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(&mcp.ImageContent{Data: decode(ImageBase64), MIMEType: "image/png"}),
				user(&mcp.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
}
