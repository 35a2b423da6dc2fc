"""A small agent loop that sends every tool call through toolgate over HTTP.

The model (Anthropic Messages API) asks for tools; toolgate validates and runs
each call and answers with an observation written for the model, which goes
back as the tool_result. The same loop as ../agent/main.go, in Python.

    toolgate sim payments --listen 127.0.0.1:9001 --slow 9s,7s,2.7s &
    TOOLGATE_KEY=dev-key-change-me-0123 toolgate serve --config examples/refunds/toolgate.yaml &
    pip install anthropic
    ANTHROPIC_API_KEY=... TOOLGATE_KEY=dev-key-change-me-0123 python examples/python/agent.py

Only the model client is a dependency: toolgate is plain JSON over HTTP.
"""

import json
import os
import urllib.request

import anthropic

TOOLGATE = os.environ.get("TOOLGATE_URL", "http://127.0.0.1:8470")
KEY = os.environ.get("TOOLGATE_KEY", "")
MODEL = os.environ.get("MODEL", "claude-sonnet-4-5")


def toolgate(method, path, body=None):
    """One request to toolgate's HTTP API; returns the decoded JSON answer.

    A tool's failure is not an HTTP failure: POST .../calls answers 200 with
    "ok": false and an observation. Non-2xx answers are the gateway's own
    refusals (auth, unknown run, bad JSON) and carry the same envelope.
    """
    req = urllib.request.Request(
        TOOLGATE + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    if KEY:
        req.add_header("Authorization", "Bearer " + KEY)
    # No client timeout shorter than the slowest tool call: toolgate bounds
    # every call itself and always answers.
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def main():
    tools = toolgate("GET", "/v1/tools?format=anthropic")
    run = toolgate("POST", "/v1/runs", {
        "principal": {"id": "cust_42", "permissions": ["refunds:write"],
                      "limits": {"max_refund_paise": 500000}},
        "state": {"refunded_paise": 0},
    })
    run_id = run["run_id"]

    client = anthropic.Anthropic()
    system = ("You are a support agent for an online shop. Act only through the tools. "
              "Each tool result is written for you: follow its advice. If it says an action MAY "
              "have happened, check with the tool it names and never issue it again as a new action.")
    messages = [{"role": "user", "content":
                 "Order ORD-4471 arrived damaged. Please refund the customer Rs 4,250 (425000 paise)."}]

    for _ in range(8):
        msg = client.messages.create(model=MODEL, max_tokens=1024, system=system,
                                     tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": msg.content})
        results = []
        usage = {"input_tokens": msg.usage.input_tokens, "output_tokens": msg.usage.output_tokens}
        for block in msg.content:
            if block.type == "text":
                print("model:", block.text)
            elif block.type == "tool_use":
                res = toolgate("POST", f"/v1/runs/{run_id}/calls", {
                    "tool": block.name, "args": block.input,
                    "call_id": block.id,   # the model's id: it shows in toolgate's history
                    "usage": usage,        # the turn's tokens, charged to its first call
                })
                usage = None
                print(f"toolgate ({block.name}):", res["observation"])
                # The observation, not the raw data, is what the model reads:
                # it says what happened and what to do next (meta.next says
                # the same for programs: continue, fix_args, verify, ...).
                results.append({"type": "tool_result", "tool_use_id": block.id,
                                "content": res["observation"], "is_error": not res["ok"]})
        if not results:
            return
        messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    main()
