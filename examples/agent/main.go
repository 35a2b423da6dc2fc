// Command agent is a small agent loop: a model (through the Anthropic
// Messages API) asks for tools, every tool call goes through toolgate's
// HTTP API, and toolgate's observation goes back to the model as the
// tool_result. It is what an agent host in any language does; see
// ../python/agent.py for the same in Python.
//
//	toolgate sim payments --listen 127.0.0.1:9001 --slow 9s,7s,2.7s &
//	TOOLGATE_KEY=dev-key-change-me-0123 toolgate serve --config examples/refunds/toolgate.yaml &
//	ANTHROPIC_API_KEY=... TOOLGATE_KEY=dev-key-change-me-0123 go run ./examples/agent
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Config is what one agent run needs.
type Config struct {
	// Toolgate is the toolgate server.
	Toolgate Toolgate
	// ModelOptions configure the Anthropic client (API key, base URL).
	ModelOptions []option.RequestOption
	// Model names the model.
	Model string
	// System and Prompt are the system prompt and the user's request.
	System, Prompt string
	// Principal is who the run acts for; State its initial state.
	Principal, State any
	// MaxTurns bounds the model requests.
	MaxTurns int
	// Out gets the transcript.
	Out io.Writer
}

func main() {
	cfg := Config{Out: os.Stdout, Toolgate: Toolgate{HTTP: &http.Client{}}}
	flag.StringVar(&cfg.Toolgate.BaseURL, "toolgate", "http://127.0.0.1:8470", "the toolgate server")
	flag.StringVar(&cfg.Model, "model", "claude-sonnet-4-5", "the model")
	flag.StringVar(&cfg.Prompt, "prompt", "Order ORD-4471 arrived damaged. Please refund the customer Rs 4,250 (425000 paise).", "the user's request")
	flag.IntVar(&cfg.MaxTurns, "max-turns", 8, "the most model requests to make")
	baseURL := flag.String("model-base-url", "", "the Messages API base URL (default: the SDK's, or $ANTHROPIC_BASE_URL)")
	flag.Parse()
	cfg.Toolgate.Key = os.Getenv("TOOLGATE_KEY")
	if *baseURL != "" {
		cfg.ModelOptions = append(cfg.ModelOptions, option.WithBaseURL(*baseURL))
	}
	cfg.System = "You are a support agent for an online shop. Act only through the tools. " +
		"Each tool result is written for you: follow its advice. If it says an action MAY have happened, " +
		"check with the tool it names before doing anything else, and never issue the same refund as a new action."
	cfg.Principal = map[string]any{"id": "cust_42", "permissions": []string{"refunds:write"},
		"limits": map[string]any{"max_refund_paise": 500000}}
	cfg.State = map[string]any{"refunded_paise": 0}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// Run opens a toolgate run and loops: ask the model; send each tool_use
// through toolgate; give the model each observation as the tool_result;
// stop when the model answers without asking for a tool.
func Run(ctx context.Context, cfg Config) error {
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 8
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	tg := &cfg.Toolgate
	tools, err := anthropicTools(ctx, tg)
	if err != nil {
		return err
	}
	runID, err := tg.StartRun(ctx, cfg.Principal, cfg.State)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "run %s, %d tools\n> %s\n", runID, len(tools), cfg.Prompt)

	client := anthropic.NewClient(cfg.ModelOptions...)
	messages := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(cfg.Prompt))}
	for turn := 0; turn < cfg.MaxTurns; turn++ {
		msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model: anthropic.Model(cfg.Model), MaxTokens: 1024, Messages: messages, Tools: tools,
			System: []anthropic.TextBlockParam{{Text: cfg.System}},
		})
		if err != nil {
			return fmt.Errorf("model: %w", err)
		}
		messages = append(messages, msg.ToParam())
		results, err := callTools(ctx, cfg.Out, tg, runID, msg)
		if err != nil {
			return err
		}
		if len(results) == 0 {
			return nil
		}
		messages = append(messages, anthropic.NewUserMessage(results...))
	}
	return errors.New("the model was still asking for tools after the last turn")
}

// anthropicTools is toolgate's tool list in the shape of Anthropic's API.
func anthropicTools(ctx context.Context, tg *Toolgate) ([]anthropic.ToolUnionParam, error) {
	raw, err := tg.Tools(ctx, "anthropic")
	if err != nil {
		return nil, err
	}
	var defs []anthropic.ToolParam
	if err := json.Unmarshal(raw, &defs); err != nil {
		return nil, fmt.Errorf("toolgate's tool list: %w", err)
	}
	tools := make([]anthropic.ToolUnionParam, len(defs))
	for i := range defs {
		tools[i] = anthropic.ToolUnionParam{OfTool: &defs[i]}
	}
	return tools, nil
}

// callTools prints the model's reply msg to out and sends each tool_use
// in it through toolgate, returning the tool_result of each: none when
// the model asked for no tool.
func callTools(ctx context.Context, out io.Writer, tg *Toolgate, runID string, msg *anthropic.Message) ([]anthropic.ContentBlockParamUnion, error) {
	var results []anthropic.ContentBlockParamUnion
	inTokens, outTokens := msg.Usage.InputTokens, msg.Usage.OutputTokens // charged to the turn's first call
	for _, block := range msg.Content {
		switch b := block.AsAny().(type) {
		case anthropic.TextBlock:
			fmt.Fprintf(out, "model: %s\n", b.Text)
		case anthropic.ToolUseBlock:
			fmt.Fprintf(out, "model calls %s %s\n", b.Name, b.Input)
			res, err := tg.Call(ctx, runID, b.Name, b.Input, b.ID, inTokens, outTokens)
			if err != nil {
				return nil, err
			}
			inTokens, outTokens = 0, 0
			fmt.Fprintf(out, "toolgate: %s\n", res.Observation)
			// The observation is what the model reads, failures included:
			// it says what happened and what to do next.
			results = append(results, anthropic.NewToolResultBlock(b.ID, res.Observation, !res.OK))
		}
	}
	return results, nil
}
